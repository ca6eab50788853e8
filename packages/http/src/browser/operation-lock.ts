/** The part of the Web Locks API the lock uses (`navigator.locks`). */
export interface LockManagerLike {
  request<T>(name: string, options: { mode: 'exclusive'; signal?: AbortSignal }, callback: () => Promise<T>): Promise<T>;
}

/** What {@link withOperationLock} ran under. */
export type LockMode = 'web-locks' | 'none';

/** The lock's name for an operation id; every tab and worker of the origin sees the same one. */
export const lockName = (operationId: string) => `oncely-operation:${operationId}`;

/**
 * Runs `fn` while holding the origin-wide Web Lock of one operation: a second tab (or a second click)
 * waits until the first has finished and then runs, finding the outcome in the journal. The browser
 * releases the lock when its holder's tab closes, reloads or crashes, so a waiter takes over with the
 * same key. Without the Web Locks API (insecure contexts, old browsers) `fn` runs at once.
 */
export async function withOperationLock<T>(
  operationId: string,
  signal: AbortSignal | undefined,
  fn: () => Promise<T>,
  locks: LockManagerLike | undefined = (globalThis.navigator as { locks?: LockManagerLike } | undefined)?.locks,
): Promise<T> {
  if (!locks) return fn();
  return locks.request(lockName(operationId), { mode: 'exclusive', ...(signal ? { signal } : {}) }, fn);
}
