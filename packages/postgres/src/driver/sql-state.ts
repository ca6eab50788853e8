/** The SQLSTATE a driver error carries (pg and PGlite both expose it as `code`). */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A prepared statement oncely did not expect to exist (42P05 already prepared). */
const ALREADY_PREPARED = '42P05';
/** A prepared statement oncely expected was not there (26000), e.g. after `DISCARD ALL`. */
export const isNotPrepared = (error: unknown) => sqlState(error) === '26000';

/** What oncely tracked as prepared on a connection turned out wrong (42P05 or 26000): re-read it. */
export const isPreparedMismatch = (error: unknown) => sqlState(error) === ALREADY_PREPARED || isNotPrepared(error);

/** `lock_timeout` expired while the claim waited on a concurrent claim of the same key. */
export const isLockTimeout = (error: unknown) => sqlState(error) === '55P03';

/**
 * REPEATABLE READ and SERIALIZABLE refuse to act on a row committed after the snapshot (40001), and
 * a deadlock victim is rolled back (40P01): before the handler runs, the claim can simply start over.
 */
export const isRetryableConflict = (error: unknown) => {
  const state = sqlState(error);
  return state === '40001' || state === '40P01';
};

/** Socket errors that end a connection. */
const SOCKET_ERRORS = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** What postgres.js calls a connection it lost, closed or could not open (its codes are not SQLSTATEs). */
const POSTGRES_JS_LOST = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT']);

/** What `pg` says of a connection it has lost or closed (these errors carry no SQLSTATE). */
const LOST_MESSAGES = /not queryable|Connection terminated|connection error|Client was closed|Query read timeout/i;

/**
 * The connection is gone: the server shut it down (57P01 `pg_terminate_backend` or a fast shutdown,
 * 57P02 crash, 57P03 not accepting connections), a connection exception (class 08), a socket error,
 * `pg` refusing a client that lost its connection, or postgres.js's `CONNECTION_CLOSED` and kin.
 * Nothing on it can commit any more.
 */
export function isConnectionLost(error: unknown): boolean {
  // Socket codes first: EPIPE has the shape of a SQLSTATE.
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code === 'string' && (SOCKET_ERRORS.has(code) || POSTGRES_JS_LOST.has(code))) return true;
  const state = sqlState(error);
  if (state !== undefined) return state.startsWith('08') || state === '57P01' || state === '57P02' || state === '57P03';
  return error instanceof Error && LOST_MESSAGES.test(error.message);
}
