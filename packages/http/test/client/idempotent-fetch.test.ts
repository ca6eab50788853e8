import { isOncelyError } from '@oncely/core';
import { memoryJournal } from '@oncely/core/journal';
import { type RetryEvent, retryPolicy } from '@oncely/core/retry';
import { postgresJournal } from '@oncely/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotentFetch } from '../../src/index.js';
import { DATABASE_URL, type PaymentsServer, startPaymentsServer, unquote } from './support/payments-server.js';

let server: PaymentsServer;
let operations = 0;
const operationId = () => `charge-${++operations}-${Date.now().toString(36)}`;
const post = (amount: number): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ amount }),
});
/** Fast retries with a deterministic jitter; the deadline is generous for a loaded CI machine. */
const fast = (events: RetryEvent[] = []) =>
  retryPolicy<Response>({ baseMs: 20, capMs: 20, random: () => 0.5, deadlineMs: 20_000, attemptTimeoutMs: 5_000, onEvent: (event) => events.push(event) });

beforeAll(async () => {
  server = await startPaymentsServer('fetch');
});
afterAll(() => server.close());

const journalOf = (pool: pg.Pool = server.pool) => postgresJournal({ db: pool, schema: server.schema });

describe('idempotentFetch against a real oncely server on PostgreSQL', () => {
  it('a lost response is retried with the journaled key and replayed: one charge', async () => {
    const journal = journalOf();
    const id = operationId();
    server.faults.push({ kind: 'drop' });
    const before = server.seenKeys.length;
    const outcome = await idempotentFetch(server.url, post(10), { operationId: id, journal, policy: fast() });
    expect(outcome.outcome).toBe('succeeded');
    if (outcome.outcome !== 'succeeded') return;
    expect(outcome.value.status).toBe(201);
    expect(outcome.value.headers.get('idempotent-replayed')).toBe('true');
    expect(await outcome.value.json()).toMatchObject({ amount: 10 });
    const entry = await journal.get(id);
    const sent = server.seenKeys.slice(before);
    expect(sent).toEqual([`"${entry!.key}"`, `"${entry!.key}"`]);
    expect(entry).toMatchObject({ state: 'succeeded', attempts: 2, request: { method: 'POST', url: server.url } });
    expect(await server.charges()).toBe(1);
  });

  it('retries 503 and honours Retry-After from a 409 in progress, with one key throughout', async () => {
    const events: RetryEvent[] = [];
    const journal = journalOf();
    server.faults.push({ kind: 'status', status: 503 }, { kind: 'status', status: 409, retryAfter: '1' });
    const before = server.seenKeys.length;
    const charges = await server.charges();
    const outcome = await idempotentFetch(server.url, post(5), {
      operationId: operationId(),
      journal,
      policy: retryPolicy<Response>({ ...fast(events), maxAttempts: 3 }),
    });
    expect(outcome.outcome).toBe('succeeded');
    expect(new Set(server.seenKeys.slice(before)).size).toBe(1);
    expect(server.seenKeys.length - before).toBe(3);
    const sleeps = events.filter((event) => event.type === 'sleep');
    expect(sleeps.map((event) => event.type === 'sleep' && event.reason)).toEqual(['unavailable', 'in_progress']);
    expect(sleeps[1]).toMatchObject({ delayMs: 1_000, retryAfterMs: 1_000 });
    expect(await server.charges()).toBe(charges + 1);
  });

  it('a 422 is definitive: failed with the Response, recorded, and answered from the journal next time', async () => {
    const journal = journalOf();
    const id = operationId();
    const first = await idempotentFetch(server.url, post(-1), { operationId: id, journal, policy: fast() });
    expect(first.outcome).toBe('failed');
    const error = first.outcome === 'failed' ? (first.error as Response) : undefined;
    expect(error?.status).toBe(422);
    expect(await error?.json()).toEqual({ error: 'amount must be positive' });
    const requests = server.seenKeys.length;
    const again = await idempotentFetch(server.url, post(-1), { operationId: id, journal, policy: fast() });
    expect(server.seenKeys.length).toBe(requests);
    expect(again.outcome === 'failed' && (again.error as Response).status).toBe(422);
    expect(again.outcome === 'failed' && (await (again.error as Response).json())).toEqual({ error: 'amount must be positive' });
  });

  it('a settled operation is answered from the journal, the same bytes, without a request', async () => {
    const journal = journalOf();
    const id = operationId();
    const first = await idempotentFetch(server.url, post(7), { operationId: id, journal, policy: fast() });
    const firstBody = first.outcome === 'succeeded' ? await first.value.text() : '';
    const requests = server.seenKeys.length;
    const charges = await server.charges();
    const again = await idempotentFetch(server.url, post(7), { operationId: id, journal, policy: fast() });
    expect(server.seenKeys.length).toBe(requests);
    expect(await server.charges()).toBe(charges);
    expect(again.outcome === 'succeeded' && again.value.status).toBe(201);
    expect(again.outcome === 'succeeded' && again.value.headers.get('content-type')).toContain('application/json');
    expect(again.outcome === 'succeeded' && (await again.value.text())).toBe(firstBody);
  });

  it('ends unknown when the answer is lost and attempts run out; a restarted caller resumes the same key: one charge', async () => {
    const id = operationId();
    server.faults.push({ kind: 'drop' });
    const before = server.seenKeys.length;
    const charges = await server.charges();
    const first = await idempotentFetch(server.url, post(3), { operationId: id, journal: journalOf(), policy: retryPolicy<Response>({ ...fast(), maxAttempts: 1 }) });
    expect(first.outcome).toBe('unknown');
    const key = first.outcome === 'unknown' ? first.key : '';
    expect(await server.charges()).toBe(charges + 1);
    // A new connection pool and journal: what a restarted process has.
    const restarted = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    try {
      const journal = journalOf(restarted);
      expect((await journal.listUnresolved({ staleAfterMs: 60_000 })).map((entry) => entry.operationId)).toContain(id);
      const second = await idempotentFetch(server.url, post(3), { operationId: id, journal, policy: fast() });
      expect(second.outcome === 'succeeded' && second.value.headers.get('idempotent-replayed')).toBe('true');
      expect(server.seenKeys.slice(before).map(unquote)).toEqual([key, key]);
      expect(await server.charges()).toBe(charges + 1);
      expect(await journal.get(id)).toMatchObject({ state: 'succeeded', attempts: 2 });
    } finally {
      await restarted.end();
    }
  });

  it("the caller's signal stops the backoff sleep; the operation is recorded unknown", async () => {
    const journal = journalOf();
    const id = operationId();
    server.faults.push({ kind: 'status', status: 503 });
    const controller = new AbortController();
    const events: RetryEvent[] = [];
    const pending = idempotentFetch(server.url, { ...post(4), signal: controller.signal }, {
      operationId: id,
      journal,
      policy: retryPolicy<Response>({
        baseMs: 60_000,
        capMs: 60_000,
        random: () => 0.99,
        deadlineMs: 120_000,
        attemptTimeoutMs: 5_000,
        onEvent: (event) => {
          events.push(event);
          if (event.type === 'sleep') controller.abort(new Error('user navigated away'));
        },
      }),
    });
    const outcome = await pending;
    expect(outcome).toMatchObject({ outcome: 'unknown', stoppedBy: 'aborted', attempts: 1 });
    expect(await journal.get(id)).toMatchObject({ state: 'unknown', attempts: 1 });
  });

  it("a bare TypeError from fetch (a browser's network failure) is retried as maybe applied, never recorded failed", async () => {
    const journal = memoryJournal();
    const id = operationId();
    const sent: string[] = [];
    // What a browser's fetch does when the connection drops: a TypeError with no code. The first answer is lost after the charge.
    let calls = 0;
    const browserLikeFetch = async (request: Request) => {
      sent.push(String(request.headers.get('idempotency-key')));
      const response = await fetch(request);
      calls += 1;
      if (calls === 1) throw new TypeError('Failed to fetch');
      return response;
    };
    const charges = await server.charges();
    const outcome = await idempotentFetch(server.url, post(6), { operationId: id, journal, policy: fast(), fetch: browserLikeFetch });
    expect(outcome.outcome === 'succeeded' && outcome.value.headers.get('idempotent-replayed')).toBe('true');
    expect(new Set(sent).size).toBe(1);
    expect(await server.charges()).toBe(charges + 1);

    const unreachable = operationId();
    const down = await idempotentFetch(server.url, post(6), {
      operationId: unreachable,
      journal,
      policy: retryPolicy<Response>({ ...fast(), maxAttempts: 2 }),
      fetch: async () => {
        throw new TypeError('Failed to fetch');
      },
    });
    expect(down).toMatchObject({ outcome: 'unknown', attempts: 2, stoppedBy: 'attempts' });
    expect(await journal.get(unreachable)).toMatchObject({ state: 'unknown', attempts: 2 });
  });

  it('sends the bare key with the stripe profile', async () => {
    const journal = memoryJournal();
    const id = operationId();
    const before = server.seenKeys.length;
    const outcome = await idempotentFetch(server.url, post(2), { operationId: id, journal, policy: fast(), profile: 'stripe' });
    expect(outcome.outcome).toBe('succeeded');
    expect(server.seenKeys.slice(before)).toEqual([(await journal.get(id))!.key]);
  });

  it('refuses to run with a key set by hand or without a journal', async () => {
    const withKey = idempotentFetch(server.url, { ...post(1), headers: { 'idempotency-key': 'mine' } }, { operationId: operationId(), journal: memoryJournal() });
    expect(isOncelyError(await withKey.catch((error: unknown) => error), 'invalid_option')).toBe(true);
    const noJournal = idempotentFetch(server.url, post(1), { operationId: operationId(), journal: undefined as never });
    expect(isOncelyError(await noJournal.catch((error: unknown) => error), 'invalid_option')).toBe(true);
  });
});
