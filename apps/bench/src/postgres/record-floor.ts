import type { Operations } from '../subjects/operations.js';
import type { PaymentEffect } from '../subjects/payment-effect.js';
import { firstRequestsOnly, paymentParams, type RunTransaction } from './business-transaction.js';
import { PAYMENTS, RAW_TABLE, SCHEMA } from './schema.js';

/** The payment insert with the completed record inserted by the same statement: one more row, no more statements. */
const INSERT_PAYMENT_AND_RECORD = `WITH record AS (
    INSERT INTO ${SCHEMA}.${RAW_TABLE} (tenant, principal, operation, idempotency_key, fingerprint, state,
      response_status, response_body, fence, expires_at)
    VALUES ('bench', 'client', 'payments.create.v1', $2, '${'f'.repeat(64)}', 'succeeded', $5, $6::json, 1,
      statement_timestamp() + interval '1 day'))
  INSERT INTO ${PAYMENTS} (id, idempotency_key, amount, currency) VALUES ($1, $2, $3, $4)`;

/**
 * The floor of any layer that commits its record with the business writes: the bare transaction
 * (BEGIN, one statement, COMMIT, the same round trips) whose statement also inserts the completed
 * record. No claim, no lock, no read: it cannot detect a duplicate, so it only bounds what one must cost.
 */
export function recordFloorOperations(run: RunTransaction, effect: PaymentEffect, name: string): Operations {
  return firstRequestsOnly(name, 'the record floor times first requests only', (key) =>
    run(async (query) => {
      const response = await effect.forKey(key)();
      await query(INSERT_PAYMENT_AND_RECORD, [...paymentParams(key, response), response.status, JSON.stringify(response.body)]);
    }),
  );
}
