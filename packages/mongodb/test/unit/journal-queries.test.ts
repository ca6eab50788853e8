import { describe, expect, it } from 'vitest';
import {
  beginCommand,
  completeUpdate,
  JOURNAL_INDEX,
  type JournalDocument,
  markUnknownUpdate,
  recordAttemptUpdate,
  settledFilter,
  unresolvedQuery,
} from '../../src/journal/journal-queries.js';
import { applyUpdate, at, freezeNow, matches, NOW } from '../support/mingo.js';

// Structure, plus evaluation by mingo (a JavaScript implementation of MongoDB's expression language,
// not MongoDB): proves the journal's transition rules, not the server. The real-server journal suite
// runs with MONGODB_URL.

freezeNow();
const apply = (pipeline: object[], document: object) => applyUpdate<JournalDocument>(pipeline, document);
const entry = (state: JournalDocument['state'], extra: Partial<JournalDocument> = {}): JournalDocument => ({
  _id: 'op-1',
  key: 'key-1',
  attempts: 2,
  state,
  createdAt: at(-60_000),
  updatedAt: at(-10_000),
  ...extra,
});
const FINAL = [entry('succeeded', { data: '{"id":1}' }), entry('failed', { data: '"declined"' })];
const OPEN = [entry('pending'), entry('unknown', { lastError: 'timeout' })];

describe('journal begin', () => {
  const command = beginCommand('op-1', 'key-new', '{"amount":10}');

  it('is one upsert on the operation id that reports whether it inserted', () => {
    expect(command.filter).toEqual({ _id: 'op-1' });
    expect(command.options).toEqual({ upsert: true, returnDocument: 'after', includeResultMetadata: true });
  });

  it('writes a fresh pending entry with the new key when there is none (mingo)', () => {
    expect(apply(command.update, { _id: 'op-1' })).toEqual({
      _id: 'op-1',
      key: 'key-new',
      attempts: 0,
      state: 'pending',
      request: '{"amount":10}',
      createdAt: NOW,
      updatedAt: NOW,
    });
  });

  it('leaves an existing entry exactly as stored, key included (mingo)', () => {
    for (const existing of [...OPEN, ...FINAL]) expect(apply(command.update, existing)).toEqual(existing);
  });
});

describe('journal transitions (mingo)', () => {
  it('recordAttempt counts, reopens an unknown entry and clears its error; final entries stay as they are', () => {
    for (const open of OPEN) {
      expect(apply(recordAttemptUpdate(), open)).toEqual({ ...entry('pending'), attempts: 3, updatedAt: NOW });
    }
    for (const done of FINAL) expect(apply(recordAttemptUpdate(), done)).toEqual(done);
  });

  it('the first definitive outcome wins', () => {
    for (const open of OPEN) {
      expect(apply(completeUpdate('succeeded', '{"id":"pay_1"}'), open)).toEqual({ ...entry('succeeded'), data: '{"id":"pay_1"}', updatedAt: NOW });
      expect(apply(completeUpdate('failed', undefined), open)).toEqual({ ...entry('failed'), updatedAt: NOW });
    }
    for (const done of FINAL) expect(apply(completeUpdate('failed', '"other"'), done)).toEqual(done);
  });

  it('markUnknown records the last error unless the entry is final', () => {
    expect(apply(markUnknownUpdate('deadline'), entry('pending'))).toEqual({ ...entry('unknown'), lastError: 'deadline', updatedAt: NOW });
    expect(apply(markUnknownUpdate(undefined), entry('unknown', { lastError: 'old' }))).toEqual({ ...entry('unknown'), updatedAt: NOW });
    for (const done of FINAL) expect(apply(markUnknownUpdate('late'), done)).toEqual(done);
  });

  it('caller strings stay strings, even when they look like field paths', () => {
    expect(apply(markUnknownUpdate('$key'), entry('pending')).lastError).toBe('$key');
    expect(apply(beginCommand('op-1', '$$ROOT', undefined).update, { _id: 'op-1' }).key).toBe('$$ROOT');
  });
});

describe('journal listing and purge', () => {
  it('lists every unknown entry and the pending ones untouched for the stale age, oldest first', () => {
    const { filter, options } = unresolvedQuery(5_000, 10);
    expect(options).toEqual({ sort: { updatedAt: 1, _id: 1 }, limit: 10 });
    expect(matches(filter, entry('unknown', { updatedAt: NOW }))).toBe(true);
    expect(matches(filter, entry('pending', { updatedAt: at(-5_000) }))).toBe(true);
    expect(matches(filter, entry('pending', { updatedAt: at(-4_999) }))).toBe(false);
    for (const done of FINAL) expect(matches(filter, { ...done, updatedAt: at(-86_400_000) })).toBe(false);
  });

  it('purges only settled entries older than the age', () => {
    const filter = settledFilter(60_000);
    expect(matches(filter, entry('succeeded', { updatedAt: at(-60_000) }))).toBe(true);
    expect(matches(filter, entry('failed', { updatedAt: at(-59_999) }))).toBe(false);
    for (const open of OPEN) expect(matches(filter, { ...open, updatedAt: at(-86_400_000) })).toBe(false);
  });

  it('the (state, updatedAt) index serves both', () => {
    expect(JOURNAL_INDEX.key).toEqual({ state: 1, updatedAt: 1 });
  });
});
