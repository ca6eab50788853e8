import { OncelyError } from '@oncely/core';
import { assertValidOperationId } from '@oncely/core/adapter';
import type { RetryOutcome } from '@oncely/core/retry';
import { type IdempotentFetchOptions, idempotentFetch as fetchOnce } from '../client/idempotent-fetch.js';
import { type LockMode, withOperationLock } from './operation-lock.js';

/** Options of the browser's {@link idempotentFetch}. */
export interface BrowserFetchOptions extends IdempotentFetchOptions {
  /**
   * `web-locks` (default): one tab at a time runs an operation; the others wait, then answer from the
   * journal. `none`: every tab sends (the server's idempotency still applies the effect once).
   */
  readonly lock?: LockMode;
}

/**
 * `idempotentFetch` for pages: the same journal-held key, retry classifier, deadline, budget and
 * `unknown` outcome, run under the operation's Web Lock so that two tabs (or a second click) pressing
 * "Pay" for the same `operationId` make one owner: the other waits, then finds the outcome in the
 * journal without sending anything. Derive the `operationId` from the user's intent (`cart-42:checkout`),
 * so a reload or a second click resumes the operation instead of starting a new one.
 *
 * Cancelling `init.signal` while waiting for the lock ends with `failed` (`stoppedBy: 'aborted'`,
 * no attempt made by this call).
 */
export async function idempotentFetch(
  input: string | URL | Request,
  init: RequestInit | undefined,
  options: BrowserFetchOptions,
): Promise<RetryOutcome<Response>> {
  const lock = options.lock ?? 'web-locks';
  if (lock !== 'web-locks' && lock !== 'none') {
    throw new OncelyError('invalid_option', `oncely/http: lock must be "web-locks" or "none", got ${String(lock)}`);
  }
  assertValidOperationId(options.operationId);
  const run = () => fetchOnce(input, init, options);
  if (lock === 'none') return run();
  const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
  try {
    return await withOperationLock(options.operationId, signal ?? undefined, run);
  } catch (error) {
    // Only the wait for the lock is cancelled this way; fetchOnce reports its own cancellation.
    if (signal?.aborted && error === signal.reason) return { outcome: 'failed', error, attempts: 0, stoppedBy: 'aborted' };
    throw error;
  }
}
