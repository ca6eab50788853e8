import { randomUUID } from 'node:crypto';
import type { ApiRequest, Exchange } from '../api-client.js';

/** A new idempotency key, generated once per logical payment as a client should. */
export function newKey(label: string): string {
  return `${label}-${randomUUID()}`;
}

/** `POST /v1/payments` for `caller` with `key`. */
export function paymentRequest(caller: string, key: string, amount = '10.00', accountId = 'acc_1'): ApiRequest {
  return { method: 'POST', path: '/v1/payments', caller, key, body: { account_id: accountId, amount, currency: 'USD' } };
}

/** True for an answer the service replayed from the stored outcome. */
export function isReplay(result: Exchange): boolean {
  return result.kind === 'answered' && result.headers['idempotent-replayed'] === 'true';
}

/** The payment id of a 201 answer. */
export function paymentId(result: Exchange | undefined): string | undefined {
  if (result?.kind !== 'answered' || result.status !== 201) return undefined;
  return (result.body as { id?: string }).id;
}

/** `HTTP 201`, `replayed 201`, or `no answer` — for the observed column. */
export function describe(result: Exchange | undefined): string {
  if (!result) return 'nothing';
  if (result.kind === 'no_answer') return 'no answer';
  return `${isReplay(result) ? 'replayed ' : ''}${result.status}`;
}

/** `1 charge, 990.00` / `2 charges, 980.00`: an account's effects for the observed column. */
export function charges(account: { readonly payments: number; readonly balance: string }): string {
  return `${account.payments} ${account.payments === 1 ? 'charge' : 'charges'}, ${account.balance}`;
}
