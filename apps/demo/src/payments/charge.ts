import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/bearer.js';
import type { Queryable } from '../database/database.js';
import { ACCOUNT_BALANCE, DEBIT_ACCOUNT, INSERT_PAYMENT, OPEN_ACCOUNT } from '../database/sql.js';
import { OPENING_BALANCE, type PaymentRequest } from './payment-request.js';

/** The 201 body of `POST /v1/payments`. */
export interface Payment {
  readonly id: string;
  readonly account_id: string;
  readonly amount: string;
  readonly currency: string;
  readonly status: 'succeeded';
}

/** The payload of the `payment.succeeded.v1` outbox event billing consumes. */
export interface PaymentSucceeded {
  readonly payment_id: string;
  readonly tenant: string;
  readonly account_id: string;
  readonly amount: string;
  readonly currency: string;
}

/** Writes an outbox row inside the caller's transaction. */
export type EnqueuePayment = (tx: Queryable, payment: PaymentSucceeded) => Promise<void>;

/** What a charge did. */
export type ChargeOutcome =
  | { readonly kind: 'charged'; readonly payment: Payment; readonly balance: string }
  | { readonly kind: 'insufficient_funds'; readonly balance: string };

/** Event type of a charge, as billing subscribes to it. */
export const PAYMENT_SUCCEEDED = 'payment.succeeded.v1';

/**
 * Charges an account inside `tx`: opens the account on first use, debits it only if the balance
 * covers the amount, records the payment and enqueues its event. All of it commits or none of it.
 */
export async function charge(tx: Queryable, caller: Caller, request: PaymentRequest, enqueue: EnqueuePayment): Promise<ChargeOutcome> {
  await tx.query(OPEN_ACCOUNT, [caller.tenant, request.account_id, OPENING_BALANCE]);
  const debited = await tx.query<{ balance: string }>(DEBIT_ACCOUNT, [caller.tenant, request.account_id, request.amount]);
  const after = debited.rows[0];
  if (!after) {
    const current = await tx.query<{ balance: string }>(ACCOUNT_BALANCE, [caller.tenant, request.account_id]);
    return { kind: 'insufficient_funds', balance: current.rows[0]?.balance ?? '0.00' };
  }
  const payment: Payment = {
    id: `pay_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    account_id: request.account_id,
    amount: request.amount,
    currency: request.currency,
    status: 'succeeded',
  };
  await tx.query(INSERT_PAYMENT, [payment.id, caller.tenant, payment.account_id, payment.amount, payment.currency]);
  await enqueue(tx, {
    payment_id: payment.id,
    tenant: caller.tenant,
    account_id: payment.account_id,
    amount: payment.amount,
    currency: payment.currency,
  });
  return { kind: 'charged', payment, balance: after.balance };
}
