import { memoryJournal, type OperationJournal } from '@oncely/core/journal';
import { retryPolicy } from '@oncely/core/retry';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idempotentFetch, localStorageJournal, type OperationView, trackOperation } from '../../src/browser.js';

/** How the scripted payments endpoint answers one attempt. */
type Answer = 'ok' | 'declined' | 'unavailable' | 'throttled' | 'refused' | 'lost-after-charge';

/**
 * A payments endpoint that honours Idempotency-Key (the first charge of a key is replayed to every
 * later attempt that reaches it), answering each attempt as scripted: `unavailable`, `throttled` and
 * `refused` never reach it. It counts charges where they happen.
 */
function scriptedEndpoint(script: Answer[] = []) {
  const charged = new Map<string, Response>();
  const keys: string[] = [];
  const charge = (key: string) => {
    if (!charged.has(key)) charged.set(key, Response.json({ id: `pay_${charged.size + 1}` }, { status: 201 }));
  };
  const fetch = async (request: Request): Promise<Response> => {
    // The IETF profile sends the key as a structured-field string.
    const key = JSON.parse(request.headers.get('idempotency-key')!) as string;
    keys.push(key);
    const answer = script.shift() ?? 'ok';
    // What a browser's fetch throws for a dropped connection.
    const dropped = new TypeError('Failed to fetch');
    if (answer === 'unavailable') return new Response(null, { status: 503 });
    if (answer === 'throttled') return new Response(null, { status: 429 });
    if (answer === 'refused') throw dropped;
    const replay = charged.get(key);
    if (replay) {
      const headers = new Headers(replay.headers);
      headers.set('idempotent-replayed', 'true');
      return new Response(replay.clone().body, { status: replay.status, headers });
    }
    if (answer === 'declined') return Response.json({ detail: 'insufficient funds' }, { status: 402 });
    charge(key);
    if (answer === 'lost-after-charge') throw dropped;
    return charged.get(key)!.clone();
  };
  return { fetch, keys, charges: () => charged.size };
}

const policy = retryPolicy<Response>({ maxAttempts: 3, baseMs: 0, capMs: 0, deadlineMs: 10_000, attemptTimeoutMs: 5_000 });
let operations = 0;

/** A checkout page's tracker: pays through the browser idempotentFetch, reads the payment's JSON. */
function checkout(journal: OperationJournal, endpoint: ReturnType<typeof scriptedEndpoint>, operationId: string, views: OperationView[] = []) {
  return trackOperation<Response, { id: string }, unknown>({
    journal,
    operationId,
    run: () => idempotentFetch('https://pay.example/v1/payments', { method: 'POST', body: '{"amount":"30.50"}' }, { operationId, journal, policy, fetch: endpoint.fetch }),
    read: (response) => response.json() as Promise<{ id: string }>,
    readError: (error) => (error instanceof Response ? error.json() : error),
    onChange: (view) => views.push(view),
  });
}

describe('trackOperation: what the page shows, and that no action mints a key', () => {
  it('a fresh operation is ready; start shows working then paid with the journal key; starting again sends nothing', async () => {
    const journal = memoryJournal();
    const endpoint = scriptedEndpoint();
    const views: OperationView[] = [];
    const operationId = `cart-${++operations}:checkout`;
    const tracked = await checkout(journal, endpoint, operationId, views);
    expect(tracked.view).toMatchObject({ status: 'ready', action: 'start', message: 'Pay' });
    const paid = await tracked.start();
    const key = (await journal.get(operationId))!.key;
    expect(views.map((view) => view.status)).toEqual(['ready', 'working', 'succeeded']);
    expect(paid).toMatchObject({ status: 'succeeded', message: 'Paid', key, value: { id: 'pay_1' } });
    await tracked.start();
    expect(endpoint.keys).toEqual([key]);
  });

  it('two clicks at once make one run', async () => {
    const endpoint = scriptedEndpoint();
    const tracked = await checkout(memoryJournal(), endpoint, `cart-${++operations}:checkout`);
    const [first, second] = await Promise.all([tracked.start(), tracked.start()]);
    expect(first).toBe(second);
    expect(endpoint.keys.length).toBe(1);
  });

  it('a page loaded again while its operation was in flight resumes it at once under the same key', async () => {
    const journal = memoryJournal();
    const operationId = `cart-${++operations}:checkout`;
    // What the page that reloaded left: begun, one attempt sent, no answer recorded.
    const { entry } = await journal.begin(operationId);
    await journal.recordAttempt(operationId);
    const endpoint = scriptedEndpoint();
    const views: OperationView[] = [];
    const tracked = await checkout(journal, endpoint, operationId, views);
    expect(tracked.view).toMatchObject({ status: 'working', message: 'Paying…', key: entry.key });
    await expect.poll(() => tracked.view.status).toBe('succeeded');
    expect(endpoint.keys).toEqual([entry.key]);
    expect(await journal.get(operationId)).toMatchObject({ state: 'succeeded', attempts: 2 });
  });

  it('answers lost until the attempts run out: unknown with reconcile, which asks again with the same key and shows paid', async () => {
    const journal = memoryJournal();
    const operationId = `cart-${++operations}:checkout`;
    const endpoint = scriptedEndpoint(['lost-after-charge', 'unavailable', 'refused']);
    const tracked = await checkout(journal, endpoint, operationId);
    const unknown = await tracked.start();
    const key = (await journal.get(operationId))!.key;
    expect(unknown).toMatchObject({ status: 'unknown', action: 'reconcile', message: 'We are checking whether your payment went through', key });
    const paid = await tracked.reconcile();
    expect(paid).toMatchObject({ status: 'succeeded', key, value: { id: 'pay_1' } });
    expect(new Set(endpoint.keys)).toEqual(new Set([key]));
    expect(endpoint.charges()).toBe(1);
  });

  it('a definitive 402 is failed, shown through readError; neither action sends anything afterwards', async () => {
    const endpoint = scriptedEndpoint(['declined']);
    const tracked = await checkout(memoryJournal(), endpoint, `cart-${++operations}:checkout`);
    expect(await tracked.start()).toMatchObject({ status: 'failed', message: 'The payment was declined', error: { detail: 'insufficient funds' } });
    await tracked.start();
    await tracked.reconcile();
    expect(endpoint.keys.length).toBe(1);
    expect(endpoint.charges()).toBe(0);
  });

  it('throttled until the attempts run out (nothing ran): ready again with the last error, and start reuses the key', async () => {
    const journal = memoryJournal();
    const operationId = `cart-${++operations}:checkout`;
    const endpoint = scriptedEndpoint(['throttled', 'throttled', 'throttled']);
    const tracked = await checkout(journal, endpoint, operationId);
    const refused = await tracked.start();
    expect(refused).toMatchObject({ status: 'ready', action: 'start' });
    expect(refused.status === 'ready' && (refused.lastError as Response).status).toBe(429);
    expect(await tracked.start()).toMatchObject({ status: 'succeeded' });
    expect(new Set(endpoint.keys)).toEqual(new Set([(await journal.get(operationId))!.key]));
  });

  it('an unreadable journal entry: the page says so, offers no action and sends nothing', async () => {
    const storage = new MapStorage();
    storage.setItem('oncely-journal:cart-x:checkout', '{"format":2,"operationId":"cart-x:checkout"}');
    const endpoint = scriptedEndpoint();
    const tracked = await checkout(localStorageJournal({ storage }), endpoint, 'cart-x:checkout');
    expect(tracked.view).toMatchObject({ status: 'unreadable', error: { code: 'corrupt_record' } });
    expect('action' in tracked.view).toBe(false);
    expect(await tracked.start()).toMatchObject({ status: 'unreadable' });
    expect(endpoint.keys).toEqual([]);
    expect(storage.getItem('oncely-journal:cart-x:checkout')).toBe('{"format":2,"operationId":"cart-x:checkout"}');
  });

  it('property: whatever the endpoint answers and the user presses or reloads, one key is ever sent, at most one charge, and paid means charged', async () => {
    const answer = fc.constantFrom<Answer>('ok', 'declined', 'unavailable', 'throttled', 'refused', 'lost-after-charge');
    const action = fc.constantFrom('start', 'reconcile', 'reload');
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { maxLength: 12 }), fc.array(action, { minLength: 1, maxLength: 6 }), async (script, actions) => {
        const journal = memoryJournal();
        const operationId = `cart-${++operations}:checkout`;
        const endpoint = scriptedEndpoint([...script]);
        const views: OperationView[] = [];
        let tracked = await checkout(journal, endpoint, operationId, views);
        let settledAfter: number | undefined;
        for (const step of actions) {
          if (step === 'reload') tracked = await checkout(journal, endpoint, operationId, views);
          else await (step === 'start' ? tracked.start() : tracked.reconcile());
          await expect.poll(() => tracked.view.status !== 'working').toBe(true);
          if (settledAfter === undefined && (tracked.view.status === 'succeeded' || tracked.view.status === 'failed')) settledAfter = endpoint.keys.length;
        }
        const key = (await journal.get(operationId))?.key;
        expect(new Set(endpoint.keys).size).toBeLessThanOrEqual(1);
        if (endpoint.keys.length > 0) expect(endpoint.keys[0]).toBe(key);
        for (const view of views) if ('key' in view && view.key !== undefined) expect(view.key).toBe(key);
        expect(endpoint.charges()).toBeLessThanOrEqual(1);
        if (views.some((view) => view.status === 'succeeded')) expect(endpoint.charges()).toBe(1);
        // Once settled, nothing more is sent.
        if (settledAfter !== undefined) expect(endpoint.keys.length).toBe(settledAfter);
      }),
      { numRuns: 60 },
    );
  });
});

/** `Storage` over a Map: Node has no localStorage; the real one is tested in Chromium. */
class MapStorage implements Storage {
  readonly #items = new Map<string, string>();
  get length() {
    return this.#items.size;
  }
  clear() {
    this.#items.clear();
  }
  getItem(name: string) {
    return this.#items.get(name) ?? null;
  }
  key(index: number) {
    return [...this.#items.keys()][index] ?? null;
  }
  removeItem(name: string) {
    this.#items.delete(name);
  }
  setItem(name: string, value: string) {
    this.#items.set(name, String(value));
  }
}
