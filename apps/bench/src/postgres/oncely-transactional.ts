import type { Idempotency } from '@oncely/core';
import type { PostgresStore } from '@oncely/postgres';
import { paymentAttempt, toCallOutcome } from '../subjects/oncely-subject.js';
import type { IdempotentSubject } from '../subjects/subject.js';
import { INSERT_PAYMENT, paymentParams } from './business-transaction.js';

/**
 * oncely in transactional mode: the claim, the payment insert (through the handler's `tx`) and the
 * saved response commit together, so the payments table itself shows how often the effect happened.
 */
export function oncelyTransactionalSubject(name: string, engine: Idempotency<PostgresStore>): IdempotentSubject {
  return {
    name,
    async execute(key, effect) {
      const result = await engine.runInTransaction(paymentAttempt(key), async ({ tx }) => {
        const response = await effect();
        await tx.query(INSERT_PAYMENT, paymentParams(key, response));
        return response;
      });
      return toCallOutcome(result);
    },
    settle: async () => undefined,
    close: () => engine.store.close(),
  };
}
