/** The SQLSTATE a driver error carries (pg and PGlite both expose it as `code`). */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

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
