import { type OncelyError, toStorageError } from '../errors.js';
import type { StorageOperation } from './storage-operation.js';

/** An adapter's storage-call guard, made by {@link storageGuard}. */
export type StorageGuard = <T>(
  operation: StorageOperation,
  call: () => T | PromiseLike<T>,
  onFailure?: (error: OncelyError) => void,
) => Promise<T>;

/**
 * The one storage-call guard, bound to the adapter named `adapter` (e.g. `postgres`). The guard runs
 * `call`; whatever it throws or rejects with leaves as a `StorageError` naming the adapter and the
 * operation (`corrupt_record` for a `corruptRecord`, `storage_error` otherwise), after `onFailure`
 * has seen it. Oncely errors pass through unchanged, so checks made inside the call keep their codes.
 * A call may answer with a plain value instead of a promise.
 *
 * ```ts
 * const storageCall = storageGuard('mysql');
 * const rows = await storageCall('claim', () => pool.query(CLAIM_SQL, params));
 * ```
 */
export function storageGuard(adapter: string): StorageGuard {
  // A `.then`, not an async frame: stores call this on every request.
  return <T>(operation: StorageOperation, call: () => T | PromiseLike<T>, onFailure?: (error: OncelyError) => void) => {
    const fail = (error: unknown): never => {
      const wrapped = toStorageError(adapter, operation, error);
      onFailure?.(wrapped);
      throw wrapped;
    };
    try {
      return Promise.resolve(call()).then(undefined, fail) as Promise<T>;
    } catch (error) {
      return Promise.reject(error).then(undefined, fail) as Promise<T>;
    }
  };
}

/**
 * Runs `work` in a transaction that `open` begins and commits around it (`driver.transaction`,
 * `session.withTransaction`): an error `work` throws leaves unchanged, so a caller's own failure is
 * never mistaken for the store's; anything else that fails (begin, commit) leaves as a `StorageError`
 * naming `adapter` and `operation`.
 *
 * ```ts
 * run: (input, fn) => storageTransaction('mysql', 'inbox.run', (work) => pool.transaction(work), (tx) => process(tx, input, fn)),
 * ```
 */
export async function storageTransaction<Tx, T>(
  adapter: string,
  operation: StorageOperation,
  open: (work: (tx: Tx) => Promise<T>) => Promise<T>,
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  let failed: { readonly error: unknown } | undefined;
  try {
    return await open(async (tx) => {
      try {
        return await work(tx);
      } catch (error) {
        failed = { error };
        throw error;
      }
    });
  } catch (error) {
    if (failed && failed.error === error) throw error;
    throw toStorageError(adapter, operation, error);
  }
}
