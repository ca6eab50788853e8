import type { Caller } from '../auth/bearer.js';
import type { RequestFault } from '../faults/fault-header.js';

/** What the service learns about a request before its handler runs. */
export interface RequestState {
  /** Arrival time, ms since the epoch: the timeline (and scenario 8) count arrivals, not completions. */
  readonly arrivedAt: number;
  caller: Caller | undefined;
  fault: RequestFault;
  /** Set when the response was deliberately dropped, so the timeline records it once. */
  dropped: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The demo's per-request state, set by the first onRequest hook. */
    demo: RequestState;
  }
}
