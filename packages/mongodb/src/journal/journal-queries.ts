import type { Document } from 'mongodb';
import { literal, NOW } from '../expressions/server-time.js';

// Every filter and pipeline of the MongoDB journal. Time is `$$NOW` (the server's clock); caller
// values go through `$literal`.

const FINAL = ['succeeded', 'failed'];
/** Keeps `field` as it is on a final entry, otherwise sets `value`. */
const unlessFinal = (field: string, value: unknown) => ({ $cond: [{ $in: ['$state', literal(FINAL)] }, `$${field}`, value] });
/** A literal, or `$$REMOVE` (the field is dropped) when there is no value. */
const optional = (value: string | undefined) => (value === undefined ? '$$REMOVE' : literal(value));
/** `updatedAt` at least `ms` before now, by the server clock. */
const untouchedFor = (ms: number) => ({ $lte: ['$updatedAt', { $subtract: [NOW, literal(ms)] }] });

/** One journal entry as it sits in the collection; JSON values kept as text. */
export interface JournalDocument {
  /** The operation id. */
  readonly _id: string;
  readonly key: string;
  readonly attempts: number;
  readonly state: 'pending' | 'unknown' | 'succeeded' | 'failed';
  readonly request?: string;
  /** The value of a success or the error of a failure, as JSON text. */
  readonly data?: string;
  readonly lastError?: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Insert-or-read in one `findOneAndUpdate`: the pipeline writes only when the upsert found nothing. */
export function beginCommand(operationId: string, key: string, requestJson: string | undefined) {
  const fresh = { _id: '$_id', key: literal(key), attempts: literal(0), state: literal('pending'), request: optional(requestJson), createdAt: NOW, updatedAt: NOW };
  return {
    filter: { _id: operationId },
    update: [{ $replaceWith: { $cond: [{ $eq: [{ $type: '$key' }, 'missing'] }, fresh, '$$ROOT'] } }],
    options: { upsert: true, returnDocument: 'after', includeResultMetadata: true } as const,
  };
}

/** One more attempt: counts, moves back to `pending` and clears `lastError`, unless the entry is final. */
export function recordAttemptUpdate(): Document[] {
  return [
    {
      $set: {
        attempts: unlessFinal('attempts', { $add: ['$attempts', literal(1)] }),
        state: unlessFinal('state', literal('pending')),
        lastError: unlessFinal('lastError', '$$REMOVE'),
        updatedAt: unlessFinal('updatedAt', NOW),
      },
    },
  ];
}

/** The first definitive outcome wins: a final entry keeps its own. */
export function completeUpdate(state: 'succeeded' | 'failed', dataJson: string | undefined): Document[] {
  return [
    {
      $set: {
        state: unlessFinal('state', literal(state)),
        data: unlessFinal('data', optional(dataJson)),
        lastError: unlessFinal('lastError', '$$REMOVE'),
        updatedAt: unlessFinal('updatedAt', NOW),
      },
    },
  ];
}

/** Gives up without a definitive answer, unless the entry is final. */
export function markUnknownUpdate(lastError: string | undefined): Document[] {
  return [
    {
      $set: {
        state: unlessFinal('state', literal('unknown')),
        lastError: unlessFinal('lastError', optional(lastError)),
        updatedAt: unlessFinal('updatedAt', NOW),
      },
    },
  ];
}

/** Every `unknown` entry and the `pending` ones untouched for `staleAfterMs`, oldest first. */
export function unresolvedQuery(staleAfterMs: number, limit: number): { filter: Document; options: { sort: Document; limit: number } } {
  return {
    filter: {
      state: { $in: ['unknown', 'pending'] },
      $expr: { $or: [{ $eq: ['$state', 'unknown'] }, untouchedFor(staleAfterMs)] },
    },
    options: { sort: { updatedAt: 1, _id: 1 }, limit },
  };
}

/** Settled entries untouched for `olderThanMs`. */
export function settledFilter(olderThanMs: number): Document {
  return { state: { $in: FINAL }, $expr: untouchedFor(olderThanMs) };
}

/** The index listing and purging walk: state, then age. */
export const JOURNAL_INDEX = { key: { state: 1, updatedAt: 1 }, options: { name: 'oncely_journal_state_updated' } } as const;
