import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockName } from '../../src/browser.js';
import { type PaymentsServer, startPaymentsServer, unquote } from '../client/support/payments-server.js';
import { openTestPage, type RunningChromium, startChromium } from './support/chromium.js';
import { bundle, PAGE_ENTRY } from './support/page-bundle.js';
import { pageAssets } from './support/page-server.js';

/** What a page's payment ended with, as plain data. */
interface PaidInPage {
  readonly outcome: string;
  readonly attempts: number;
  readonly stoppedBy?: string;
  readonly status?: number;
  readonly replayed?: string | null;
  readonly body?: unknown;
  readonly unknownKey?: string;
  /** The journal's entry afterwards. */
  readonly entry?: { readonly key: string; readonly state: string; readonly attempts: number };
}

interface PayOptions {
  readonly database: string;
  readonly operationId: string;
  readonly amount: number;
  readonly maxAttempts?: number;
  readonly lock?: 'web-locks' | 'none';
  /** Cancels the call after this many ms. */
  readonly abortAfterMs?: number;
}

/** Runs the browser idempotentFetch in `page` against the same-origin payments endpoint. */
const pay = (page: Page, options: PayOptions): Promise<PaidInPage> =>
  page.evaluate(async ({ database, operationId, amount, maxAttempts, lock, abortAfterMs }) => {
    const { oncely, oncelyHelpers } = window;
    const journal = oncely.indexedDbJournal({ database });
    const policy = oncelyHelpers.retryPolicy<Response>({
      ...{ baseMs: 20, capMs: 20, random: () => 0.5, deadlineMs: 20_000, attemptTimeoutMs: 5_000 },
      maxAttempts: maxAttempts ?? 3,
    });
    const init: RequestInit = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount }),
      ...(abortAfterMs === undefined ? {} : { signal: AbortSignal.timeout(abortAfterMs) }),
    };
    const result = await oncely.idempotentFetch('/v1/payments', init, { operationId, journal, policy, ...(lock ? { lock } : {}) });
    const entry = await journal.get(operationId);
    await journal.close();
    const stored = entry && { key: entry.key, state: entry.state, attempts: entry.attempts };
    const base = { outcome: result.outcome, attempts: result.attempts, entry: stored };
    if (result.outcome === 'succeeded') {
      const { status, headers } = result.value;
      return { ...base, status, replayed: headers.get('idempotent-replayed'), body: await result.value.json() };
    }
    if (result.outcome === 'unknown') return { ...base, stoppedBy: result.stoppedBy, unknownKey: result.key };
    return { ...base, stoppedBy: result.stoppedBy };
  }, options);

describe('the browser idempotentFetch in Chromium, against a real oncely endpoint on PostgreSQL', () => {
  let server: PaymentsServer;
  let chromium: RunningChromium;
  let page: Page;
  let tests = 0;
  const fresh = () => ({ database: `oncely-fetch-${Date.now().toString(36)}-${++tests}`, operationId: `cart-${tests}:checkout` });
  const origin = () => new URL(server.url).origin;

  const open = () => openTestPage(chromium.context, origin());

  beforeAll(async () => {
    server = await startPaymentsServer('browser', { assets: pageAssets((await bundle(PAGE_ENTRY)).text) });
    chromium = await startChromium();
    page = await open();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  it("an answer dropped after the charge: Chromium's TypeError is retried under the journal's key and replayed, one charge", async () => {
    const charges = await server.charges();
    const before = server.seenKeys.length;
    server.faults.push({ kind: 'drop' });
    const paid = await pay(page, { ...fresh(), amount: 12 });
    expect(paid).toMatchObject({ outcome: 'succeeded', status: 201, replayed: 'true', attempts: 2, body: { amount: 12 } });
    expect(paid.entry).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect(server.seenKeys.slice(before).map(unquote)).toEqual([paid.entry!.key, paid.entry!.key]);
    expect(await server.charges()).toBe(charges + 1);
  });

  it('answers dropped until the attempts run out: unknown with the key, never failed; reconciling later replays, one charge', async () => {
    const operation = fresh();
    const charges = await server.charges();
    const before = server.seenKeys.length;
    server.faults.push({ kind: 'drop' }, { kind: 'drop' });
    const lost = await pay(page, { ...operation, amount: 13, maxAttempts: 2 });
    expect(lost).toMatchObject({ outcome: 'unknown', stoppedBy: 'attempts', attempts: 2, entry: { state: 'unknown', attempts: 2 } });
    expect(lost.unknownKey).toBe(lost.entry!.key);
    expect(await server.charges()).toBe(charges + 1);
    // Another page load, later: the same operation id finds the same key.
    await page.reload();
    await page.waitForFunction(() => window.oncely !== undefined);
    const reconciled = await pay(page, { ...operation, amount: 13 });
    expect(reconciled).toMatchObject({ outcome: 'succeeded', status: 201, replayed: 'true', entry: { key: lost.entry!.key, state: 'succeeded', attempts: 3 } });
    expect(new Set(server.seenKeys.slice(before).map(unquote))).toEqual(new Set([lost.entry!.key]));
    expect(await server.charges()).toBe(charges + 1);
  });

  it('two tabs pay the same operation at once: one owner sends, the other waits and answers from the journal; one request, one charge', async () => {
    const operation = fresh();
    const other = await open();
    try {
      const charges = await server.charges();
      const before = server.seenKeys.length;
      server.faults.push({ kind: 'hold', ms: 800 });
      const [first, second] = await Promise.all([pay(page, { ...operation, amount: 14 }), pay(other, { ...operation, amount: 14 })]);
      expect(server.seenKeys.length - before).toBe(1);
      for (const paid of [first, second]) expect(paid).toMatchObject({ outcome: 'succeeded', status: 201, body: first.body });
      expect(first.entry!.key).toBe(second.entry!.key);
      expect(await server.charges()).toBe(charges + 1);
    } finally {
      await other.close();
    }
  });

  it("without the lock both tabs send: two requests under one key, and the server's idempotency still charges once", async () => {
    const operation = fresh();
    const other = await open();
    try {
      const charges = await server.charges();
      const before = server.seenKeys.length;
      server.faults.push({ kind: 'hold', ms: 800 });
      const [first, second] = await Promise.all([
        pay(page, { ...operation, amount: 15, lock: 'none' }),
        pay(other, { ...operation, amount: 15, lock: 'none' }),
      ]);
      expect(first.outcome).toBe('succeeded');
      expect(second.outcome).toBe('succeeded');
      const sent = server.seenKeys.slice(before).map(unquote);
      expect(sent.length).toBeGreaterThanOrEqual(2);
      expect(new Set(sent)).toEqual(new Set([first.entry!.key]));
      expect(await server.charges()).toBe(charges + 1);
    } finally {
      await other.close();
    }
  });

  it('the owner tab closes mid-request: the tab waiting on the lock takes over under the same key, one charge', async () => {
    const operation = fresh();
    const owner = await open();
    const charges = await server.charges();
    const before = server.seenKeys.length;
    server.faults.push({ kind: 'hold', ms: 1_500 });
    void pay(owner, { ...operation, amount: 16 }).catch(() => undefined);
    await expect.poll(() => server.seenKeys.length - before).toBe(1);
    const waiting = pay(page, { ...operation, amount: 16 });
    // The second tab is queued behind the first for the operation's lock before the first goes away.
    const queued = (name: string) => page.evaluate(async (name) => (await navigator.locks.query()).pending?.some((lock) => lock.name === name), name);
    await expect.poll(() => queued(lockName(operation.operationId))).toBe(true);
    await owner.close();
    const paid = await waiting;
    expect(paid).toMatchObject({ outcome: 'succeeded', status: 201, body: { amount: 16 } });
    // The closed tab's request was still on its way: let it arrive, then count.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(server.seenKeys.slice(before).map(unquote)).toEqual([paid.entry!.key, paid.entry!.key]);
    expect(await server.charges()).toBe(charges + 1);
  });

  it('cancelled while waiting for the lock: failed, stopped by the abort, no attempt from this tab', async () => {
    const operation = fresh();
    const other = await open();
    try {
      const before = server.seenKeys.length;
      server.faults.push({ kind: 'hold', ms: 1_000 });
      const owner = pay(other, { ...operation, amount: 17 });
      await expect.poll(() => server.seenKeys.length - before).toBe(1);
      const cancelled = await pay(page, { ...operation, amount: 17, abortAfterMs: 200 });
      expect(cancelled).toMatchObject({ outcome: 'failed', stoppedBy: 'aborted', attempts: 0 });
      expect((await owner).outcome).toBe('succeeded');
      expect(server.seenKeys.length - before).toBe(1);
    } finally {
      await other.close();
    }
  });
});
