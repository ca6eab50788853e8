import { setTimeout as sleep } from 'node:timers/promises';
import { type Exchange, exchange } from './api-client.js';

/** An account as `GET /v1/accounts/:id` reports it. */
export interface AccountView {
  readonly id: string;
  readonly balance: string;
  readonly payments: number;
}

/** `GET /v1/stats`. */
export interface StatsView {
  readonly executed: number;
  readonly replayed: number;
  readonly mismatches: number;
  readonly in_progress_collisions: number;
  readonly outbox_unpublished: number;
  readonly consumer_duplicates: number;
  readonly events_consumed: number;
  readonly pid: number;
}

/** An invoice line billing recorded. */
export interface InvoiceLine {
  readonly payment_id: string;
  readonly account_id: string;
  readonly amount: string;
}

function answered(result: Exchange, what: string): Extract<Exchange, { kind: 'answered' }> & { body: unknown } {
  if (result.kind !== 'answered') throw new Error(`${what}: no answer (${result.error.message})`);
  if (result.status >= 400) throw new Error(`${what}: HTTP ${result.status} ${JSON.stringify(result.body)}`);
  return result;
}

/** Reads an account's balance and number of charges. */
export async function readAccount(baseUrl: string, caller: string, id: string): Promise<AccountView> {
  return answered(await exchange(baseUrl, { method: 'GET', path: `/v1/accounts/${id}`, caller }), `account ${id}`).body as AccountView;
}

/** Reads the service's counters. */
export async function readStats(baseUrl: string): Promise<StatsView> {
  return answered(await exchange(baseUrl, { method: 'GET', path: '/v1/stats' }), 'stats').body as StatsView;
}

/** Reads a tenant's invoice lines. */
export async function readInvoiceLines(baseUrl: string, caller: string): Promise<readonly InvoiceLine[]> {
  const body = answered(await exchange(baseUrl, { method: 'GET', path: '/v1/invoice-lines', caller }), 'invoice lines').body;
  return (body as { lines: InvoiceLine[] }).lines;
}

/** Reads the broker gauges from the dashboard feed. */
export async function readBroker(baseUrl: string): Promise<{ delivered: number; unacked: number }> {
  const feed = answered(await exchange(baseUrl, { method: 'GET', path: '/demo/feed?limit=1' }), 'feed').body;
  return (feed as { broker: { delivered: number; unacked: number } }).broker;
}

/** `GET /v1/idempotency-keys/:key`: the record's state, or `absent` on 404. */
export async function lookupKey(
  baseUrl: string,
  caller: string,
  key: string,
): Promise<{ state: 'absent' } | { state: string; resourceId?: string }> {
  const result = await exchange(baseUrl, { method: 'GET', path: `/v1/idempotency-keys/${encodeURIComponent(key)}`, caller });
  if (result.kind === 'answered' && result.status === 404) return { state: 'absent' };
  const body = answered(result, 'lookup').body as { records: { state: string; response?: { resourceId?: string } }[] };
  const record = body.records[0]!;
  return record.response?.resourceId ? { state: record.state, resourceId: record.response.resourceId } : { state: record.state };
}

/** Arms a fault in the relay, the consumer or the card network (`POST /v1/faults`). */
export async function armFault(baseUrl: string, body: Record<string, unknown>): Promise<void> {
  answered(await exchange(baseUrl, { method: 'POST', path: '/v1/faults', body }), 'arm fault');
}

/** Polls `read` until `done` holds; returns the last value read, and whether it held in time. */
export async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number } = {},
): Promise<{ value: T; held: boolean }> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  for (;;) {
    const value = await read();
    if (done(value)) return { value, held: true };
    if (Date.now() >= deadline) return { value, held: false };
    await sleep(options.intervalMs ?? 100);
  }
}
