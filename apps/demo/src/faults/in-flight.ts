import type { FastifyInstance } from 'fastify';

/** Counts HTTP exchanges still open, so a background crash can wait for answers already on their way. */
export interface InFlight {
  /** Resolves at the next moment no exchange is open (at once if none is). */
  whenIdle(): Promise<void>;
}

/**
 * Tracks every exchange of `app` from arrival to the close of its response. The relay and billing
 * crash points wait for it: they are about the background work, so the payment that produced the
 * event has been answered first (in lease mode the answer follows a Redis write the relay could race).
 */
export function trackInFlight(app: FastifyInstance): InFlight {
  let open = 0;
  let waiters: (() => void)[] = [];
  app.addHook('onRequest', async (_request, reply) => {
    open += 1;
    reply.raw.once('close', () => {
      open -= 1;
      if (open > 0) return;
      const wake = waiters;
      waiters = [];
      for (const resolve of wake) resolve();
    });
  });
  return {
    whenIdle: () => (open === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
  };
}
