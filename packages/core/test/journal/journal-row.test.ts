import { describe, expect, it } from 'vitest';
import { type JournalRow, toJournalEntry, toStorageError } from '../../src/adapter.js';

const row: JournalRow = { operationId: 'op-1', key: 'k-1', attempts: 1, state: 'pending', createdAt: 1, updatedAt: 2 };
const readInGuard = (stored: JournalRow) => {
  try {
    return toJournalEntry(stored);
  } catch (error) {
    return toStorageError('mysql', 'journal.get', error);
  }
};

describe('toJournalEntry: rows no journal wrote are corrupt records', () => {
  it('an unknown state or stored JSON that does not parse becomes corrupt_record inside a storage call', () => {
    for (const stored of [
      { ...row, state: 'done' as never },
      { ...row, requestJson: '{"amount":' },
      { ...row, state: 'succeeded' as const, dataJson: 'not json' },
    ]) {
      expect(readInGuard(stored)).toMatchObject({ code: 'corrupt_record', adapter: 'mysql', operation: 'journal.get' });
    }
  });

  it('a row a journal wrote reads back', () => {
    expect(readInGuard({ ...row, state: 'succeeded', dataJson: '{"id":"pay_1"}', requestJson: '[1]' })).toMatchObject({
      state: 'succeeded',
      value: { id: 'pay_1' },
      request: [1],
    });
  });
});
