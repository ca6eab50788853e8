/** Marks oncely errors across duplicate copies of the package, where `instanceof` fails. */
const ONCELY_ERROR = Symbol.for('oncely.error');

/**
 * Every code an {@link OncelyError} can carry. Codes are stable: match on them, not on messages.
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
  | 'capability_missing'
  | 'lease_lost'
  | 'storage_error'
  | 'retry_aborted'
  | 'circuit_open'
  | 'invalid_event'
  | 'outbox_sequence_conflict'
  | 'invalid_state'
  | 'publish_aborted'
  | 'invalid_operation_id'
  | 'operation_not_begun'
  | 'journal_entry_unreadable'
  | 'attempt_timeout'
  | 'deadline_exceeded';

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

/**
 * A store failed (connection lost, timeout, driver error). The operation did not run: oncely fails
 * closed, so no side effect happens without a successful claim.
 */
export class StorageError extends OncelyError {
  /** Which adapter failed, e.g. `postgres`. */
  readonly adapter: string;
  /** Which store operation failed, e.g. `claim`. */
  readonly operation: string;

  constructor(adapter: string, operation: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('storage_error', `oncely/${adapter}: ${operation} failed: ${reason}`, { cause });
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

/** True when `error` is a {@link StorageError} (from any copy of the package). */
export function isStorageError(error: unknown): error is StorageError {
  return isOncelyError(error, 'storage_error');
}

/** Wraps whatever a store threw into a {@link StorageError}, leaving oncely errors as they are. */
export function toStorageError(adapter: string, operation: string, cause: unknown): OncelyError {
  return isOncelyError(cause) ? cause : new StorageError(adapter, operation, cause);
}
