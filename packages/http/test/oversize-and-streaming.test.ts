import { createIdempotency, type EngineEvent, memoryStore } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { bindings, type RouteSpec, withServer } from './support/bindings.js';
import { expectProblem, newLedger, paymentRoute } from './support/payments.js';
import { postJson } from './support/send.js';

const largeReport = (ledger: { charges: unknown[] }): RouteSpec => ({
  method: 'POST',
  path: '/reports',
  options: { operation: 'reports.create.v1', maxStoredBodyBytes: 1_000, resourceId: ({ body }) => (body?.encoding === 'json' ? (body.json as { id: string }).id : undefined) },
  handle: async () => {
    ledger.charges.push({});
    const id = `rep_${ledger.charges.length}`;
    return { status: 201, headers: { location: `/reports/${id}` }, body: { kind: 'json', value: { id, rows: 'x'.repeat(5_000) } } };
  },
});

describe.each(bindings)('$name: oversize and streaming responses', (binding) => {
  it('omit: a body over maxStoredBodyBytes is not stored (event says so); the replay has status and headers, no body', async () => {
    const events: EngineEvent[] = [];
    const ledger = newLedger();
    const store = memoryStore();
    const engine = createIdempotency({ store, onEvent: (event) => events.push(event) });
    await withServer(binding, engine, [largeReport(ledger)], async (url) => {
      const first = await postJson(url, '/reports', {}, 'key-1');
      expect(first.status).toBe(201);
      expect(first.body.length).toBeGreaterThan(5_000);
      const replay = await postJson(url, '/reports', {}, 'key-1');
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers.location).toBe('/reports/rep_1');
      expect(replay.body.length).toBe(0);
      expect(replay.headers['content-type']).toBeUndefined();
    });
    expect(ledger.charges).toHaveLength(1);
    expect(events.filter((event) => event.type === 'response_not_stored')).toMatchObject([{ strategy: 'omit' }]);
    const record = await store.get({ tenant: 'acme', principal: 'alice', operation: 'reports.create.v1', key: 'key-1' });
    expect(record?.response).toMatchObject({ status: 201, resourceId: 'rep_1', bodyOmitted: true });
    expect(record?.response?.body).toBeUndefined();
  });

  it("the engine's own maxStoredBytes applies too, without a route limit", async () => {
    const events: EngineEvent[] = [];
    const ledger = newLedger();
    const engine = createIdempotency({ store: memoryStore(), maxStoredBytes: 2_000, onEvent: (event) => events.push(event) });
    const route = largeReport(ledger);
    await withServer(binding, engine, [{ ...route, options: { operation: route.options.operation } }], async (url) => {
      await postJson(url, '/reports', {}, 'key-1');
      expect((await postJson(url, '/reports', {}, 'key-1')).body.length).toBe(0);
    });
    expect(events.find((event) => event.type === 'response_not_stored')).toMatchObject({ strategy: 'omit', limitBytes: 2_000 });
  });

  it('reference: a large body is stored as its resource id and rebuilt from the resource on replay', async () => {
    const ledger = newLedger();
    const reports = new Map<string, unknown>();
    const engine = createIdempotency({
      store: memoryStore(),
      oversize: 'reference',
      rebuild: async (stored) => ({ status: stored.status, headers: stored.headers, body: reports.get(stored.resourceId) }),
    });
    const route = largeReport(ledger);
    const recording: RouteSpec = {
      ...route,
      handle: async (input) => {
        const response = await route.handle(input);
        if (response.body.kind === 'json') reports.set((response.body.value as { id: string }).id, response.body.value);
        return response;
      },
    };
    await withServer(binding, engine, [recording], async (url) => {
      const first = await postJson(url, '/reports', {}, 'key-1');
      const replay = await postJson(url, '/reports', {}, 'key-1');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual(first.json());
      expect(replay.headers['content-type']).toMatch(/^application\/json/);
    });
    expect(ledger.charges).toHaveLength(1);
  });

  it('a text/event-stream response is refused with 500 problem+json and its claim released, never stored', async () => {
    const store = memoryStore();
    let runs = 0;
    const events: RouteSpec = {
      method: 'POST',
      path: '/events',
      options: { operation: 'events.subscribe.v1' },
      handle: async () => {
        runs++;
        return { status: 200, body: { kind: 'event-stream' } };
      },
    };
    await withServer(binding, createIdempotency({ store }), [events, paymentRoute(newLedger())], async (url) => {
      const response = await postJson(url, '/events', {}, 'key-1');
      const problem = expectProblem(response, 'streaming-response-refused', 500);
      expect(problem.detail).toContain('text/event-stream');
      expect(store.size).toBe(0);
      // The server is still healthy: other routes keep working after the refusal.
      expect((await postJson(url, '/payments', { amount: 1 }, 'key-2')).status).toBe(201);
    });
    expect(runs).toBe(1);
  });
});
