import type { Idempotency, IdempotencyStore } from '@oncely/core';
import type { StoreName } from '../bench-engines.js';

/** A running bench server. */
export interface RunningServer {
  close(): Promise<void>;
}

/**
 * Starts one binding's server on `port` with the bare route and the same route behind oncely on
 * each store ({@link ROUTES}); both sides of every comparison run in the same framework and process.
 */
export type ServeBinding = (engines: Record<StoreName, Idempotency<IdempotencyStore>>, port: number) => Promise<RunningServer>;
