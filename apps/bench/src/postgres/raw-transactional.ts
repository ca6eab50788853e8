import type { Operations } from '../subjects/operations.js';
import type { PaymentEffect } from '../subjects/payment-effect.js';
import { firstRequestsOnly, INSERT_PAYMENT, paymentParams, type RunTransaction } from './business-transaction.js';
import { rawStatements } from './raw-statements.js';

const FINGERPRINT = 'f'.repeat(64);

/** Rows of a result as pg and PGlite (`{ rows }`) and postgres.js (the rows themselves) return them. */
const rowsOf = (result: unknown): unknown[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows);

/**
 * The driver alone doing what transactional mode does, in the business transaction: the raw claim
 * insert, the payment insert and the raw complete, between the same BEGIN and COMMIT. The floor for
 * an idempotency layer that writes its record in the business transaction, as every statement here
 * is one oncely's transactional mode also runs (oncely's claim and save check more).
 */
export function rawTransactionalOperations(run: RunTransaction, effect: PaymentEffect, name: string): Operations {
  const scope = (key: string) => ['bench', 'client', 'payments.create.v1', key];
  return firstRequestsOnly(name, 'the raw transactional baseline times first requests; replays are raw lease reads', (key) =>
    run(async (query) => {
      const token = crypto.randomUUID();
      const claimed = rowsOf(await query(rawStatements.claim, [...scope(key), FINGERPRINT, token]));
      if (claimed.length !== 1) throw new Error(`bench: raw transactional claim of ${key} found an existing row`);
      const response = await effect.forKey(key)();
      await query(INSERT_PAYMENT, paymentParams(key, response));
      const completed = rowsOf(await query(rawStatements.complete, [...scope(key), token, response.status, JSON.stringify(response.body)]));
      if (completed.length !== 1) throw new Error(`bench: raw transactional complete of ${key} lost its token`);
    }),
  );
}
