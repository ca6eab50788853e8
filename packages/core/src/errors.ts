import type { StorageOperation } from './storage/storage-operation.js';

/** Marks oncely errors across duplicate copies of the package, where `instanceof` fails. */
const ONCELY_ERROR = Symbol.for('oncely.error');

/**
 * Every code an {@link OncelyError} can carry. Codes are stable: match on them, not on messages.
 * Each means one thing:
 * - `invalid_option`: a value is unusable whenever it is given: a factory's or a call's option, an
 *   argument of a pure helper. Thrown before anything is touched.
 * - `invalid_state`: misuse at run time: a call that is not allowed now or on this handle (starting a
 *   relay that is running, writing through a transaction that has ended, enqueueing outside a
 *   transaction) or a callback that answered outside its contract (an engine handler's response, a
 *   publisher's or a stream handler's answer).
 * - `storage_error`: a store failed (connection, timeout, driver error); a {@link StorageError}.
 * - `corrupt_record`: a store answered with a record its adapter did not write or cannot read, or with
 *   an answer outside its contract (the engine, `retryOperation` and the relay check them); also a
 *   {@link StorageError}, so `isStorageError` is true and callers fail closed as for any storage failure.
 * - `aborted`: a signal ended the wait or the work (a caller's signal, a relay's stop).
 * - `attempt_timeout`, `deadline_exceeded`: an attempt, or a whole retried call, ran out of time; the
 *   attempt may have taken effect.
 * - `invalid_event`: an outbox event or an inbox delivery is malformed; nothing was written.
 * - `duplicate_event`: an event with this `eventId` is already in the outbox; nothing was written.
 * - `outbox_sequence_conflict`: an explicit `aggregateSeq` is not above the aggregate's last one.
 * - the rest name the input they refuse (`missing_key`, `invalid_tenant`, `invalid_operation_id`...)
 *   or the outcome they report (`lease_lost`, `circuit_open`, `capability_missing`, `operation_not_begun`).
 */
export type OncelyErrorCode =
  | 'missing_key'
  | 'key_too_long'
  | 'invalid_key_characters'
  | 'missing_tenant'
  | 'invalid_tenant'
  | 'invalid_principal'
  | 'missing_operation'
  | 'invalid_operation'
  | 'invalid_request_payload'
  | 'invalid_option'
  | 'invalid_state'
  | 'capability_missing'
  | 'lease_lost'
  | 'storage_error'
  | 'corrupt_record'
  | 'aborted'
  | 'circuit_open'
  | 'invalid_event'
  | 'duplicate_event'
  | 'outbox_sequence_conflict'
  | 'invalid_operation_id'
  | 'operation_not_begun'
  | 'attempt_timeout'
  | 'deadline_exceeded';

/** The codes a {@link StorageError} carries: a failed store, or a record the store cannot vouch for. */
export type StorageErrorCode = Extract<OncelyErrorCode, 'storage_error' | 'corrupt_record'>;

/** The one error class oncely throws; `code` says what went wrong. */
export class OncelyError extends Error {
  /** Stable machine-readable reason. */
  readonly code: OncelyErrorCode;

  constructor(code: OncelyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OncelyError';
    this.code = code;
    Object.defineProperty(this, ONCELY_ERROR, { value: true });
  }
}

/** A thrown value as text; some values (`{ toString: '' }`, a revoked proxy) throw when converted. */
function describeCause(cause: unknown): string {
  try {
    return String(cause);
  } catch {
    return `a ${typeof cause} that cannot be shown as text`;
  }
}

/**
 * A store failed (connection lost, timeout, driver error: `storage_error`) or answered with a record
 * its adapter did not write or cannot read (`corrupt_record`). Either way the operation did not run:
 * oncely fails closed, so no side effect happens without a successful claim.
 */
export class StorageError extends OncelyError {
  declare readonly code: StorageErrorCode;
  /** Which adapter failed, e.g. `postgres`. */
  readonly adapter: string;
  /** Which operation failed, e.g. `claim` or `outbox.claim`. */
  readonly operation: StorageOperation;

  constructor(adapter: string, operation: StorageOperation, cause: unknown, code: StorageErrorCode = 'storage_error') {
    const reason = cause instanceof Error ? cause.message : describeCause(cause);
    const what = code === 'corrupt_record' ? 'read a record it cannot trust' : 'failed';
    super(code, `oncely/${adapter}: ${operation} ${what}: ${reason}`, { cause });
    this.name = 'StorageError';
    this.adapter = adapter;
    this.operation = operation;
  }
}

/** True for any oncely error, from this copy of the package or another; narrows by `code` if given. */
export function isOncelyError<C extends OncelyErrorCode>(
  error: unknown,
  code?: C,
): error is OncelyError & { code: C } {
  if (typeof error !== 'object' || error === null) return false;
  if ((error as Record<symbol, unknown>)[ONCELY_ERROR] !== true) return false;
  return code === undefined || (error as OncelyError).code === code;
}

/** True when `error` is a {@link StorageError}, either code (from any copy of the package): fail closed. */
export function isStorageError(error: unknown): error is StorageError {
  return isOncelyError(error) && (error.code === 'storage_error' || error.code === 'corrupt_record');
}

/** Marks an error from reading storage as "a record this adapter did not write or cannot read". */
const CORRUPT_RECORD = Symbol.for('oncely.corrupt_record');

/**
 * The error an adapter throws when storage answers with something it did not write or cannot read
 * (an unknown state, a missing field, JSON that does not parse). Throw it inside a storage call: the
 * guard turns it into a {@link StorageError} with code `corrupt_record`, naming adapter and operation.
 */
export function corruptRecord(detail: string): Error {
  const error = new Error(detail);
  error.name = 'CorruptRecord';
  Object.defineProperty(error, CORRUPT_RECORD, { value: true });
  return error;
}

/**
 * Wraps whatever a store threw into a {@link StorageError} (`corrupt_record` for a
 * {@link corruptRecord}, `storage_error` for the rest), leaving oncely errors as they are.
 */
export function toStorageError(adapter: string, operation: StorageOperation, cause: unknown): OncelyError {
  if (isOncelyError(cause)) return cause;
  const corrupt = typeof cause === 'object' && cause !== null && (cause as Record<symbol, unknown>)[CORRUPT_RECORD] === true;
  return new StorageError(adapter, operation, cause, corrupt ? 'corrupt_record' : 'storage_error');
}
