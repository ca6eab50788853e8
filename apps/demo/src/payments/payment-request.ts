import { checkAmount } from './money.js';

/** Every tenant's accounts, created on first use with a balance of 1000.00. */
export const ACCOUNT_IDS: readonly string[] = ['acc_1', 'acc_2', 'acc_3', 'acc_4', 'acc_5'];

/** Opening balance of every account. */
export const OPENING_BALANCE = '1000.00';

/** The body of `POST /v1/payments`, once checked. */
export interface PaymentRequest {
  readonly account_id: string;
  readonly amount: string;
  readonly currency: 'USD';
}

/** What request validation decided, before any claim is made. */
export type PaymentRequestCheck =
  | { readonly kind: 'valid'; readonly request: PaymentRequest }
  | { readonly kind: 'invalid'; readonly status: 400 | 404; readonly detail: string };

const FIELDS = new Set(['account_id', 'amount', 'currency']);

/** Validates a payment body: exactly `account_id`, `amount` (decimal string) and `currency` (`USD`). */
export function checkPaymentRequest(body: unknown): PaymentRequestCheck {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { kind: 'invalid', status: 400, detail: 'The body must be a JSON object { account_id, amount, currency }.' };
  }
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((name) => !FIELDS.has(name));
  if (unknown.length > 0) return { kind: 'invalid', status: 400, detail: `Unknown field(s): ${unknown.join(', ')}.` };
  if (typeof fields.account_id !== 'string') return { kind: 'invalid', status: 400, detail: 'account_id must be a string such as "acc_1".' };
  if (!ACCOUNT_IDS.includes(fields.account_id)) {
    return { kind: 'invalid', status: 404, detail: `No account ${fields.account_id}: every tenant has acc_1 to acc_5.` };
  }
  const amount = checkAmount(fields.amount);
  if (amount.kind === 'invalid') return { kind: 'invalid', status: 400, detail: amount.detail };
  // Accounts hold US dollars; a conversion is not part of this demo.
  if (fields.currency !== 'USD') return { kind: 'invalid', status: 400, detail: 'currency must be "USD".' };
  return { kind: 'valid', request: { account_id: fields.account_id, amount: amount.amount, currency: 'USD' } };
}
