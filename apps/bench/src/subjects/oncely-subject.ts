import type { Idempotency, IdempotencyStore, RunResult } from '@oncely/core';
import { type CallOutcome, type IdempotentSubject, PAYMENT_REQUEST, type PaymentResponse } from './subject.js';

/** The scope every oncely contender uses: one tenant, one operation, the client's key. */
export function paymentAttempt(key: string) {
  return { tenant: 'bench', principal: 'client', operation: 'payments.create.v1', key, request: PAYMENT_REQUEST };
}

/** Maps an engine result to what the caller saw. */
export function toCallOutcome(result: RunResult<unknown>): CallOutcome {
  switch (result.kind) {
    case 'executed':
      return { kind: 'executed' };
    case 'replayed':
      return { kind: 'replayed' };
    case 'in_progress':
      return { kind: 'in_progress' };
    case 'mismatch':
      return { kind: 'rejected', reason: 'mismatch' };
  }
}

/** oncely in lease mode (`run`) over any store: claim, handler, complete. */
export function oncelyLeaseSubject(name: string, engine: Idempotency<IdempotencyStore>): IdempotentSubject {
  return {
    name,
    async execute(key, effect: () => Promise<PaymentResponse>) {
      return toCallOutcome(await engine.run(paymentAttempt(key), () => effect()));
    },
    settle: async () => undefined,
    close: () => engine.store.close(),
  };
}
