import { describe, expect, it } from 'vitest';
import { type CompleterEvent, createCompleter, createIdempotency, type Flow, manualClock, type MemoryFlowTx, memoryStore } from '../../src/index.js';

const never = new Promise<never>(() => undefined);
const LEASE = 1_000;

function world() {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const store = memoryStore({ clock });
  const engine = createIdempotency({ store, leaseMs: LEASE, clock });
  const rows: string[] = [];
  const charges: string[] = [];
  const payment = (crash: boolean) => async (flow: Flow<MemoryFlowTx>) => {
    await flow.atomic('order', (tx) => tx.onCommit(() => rows.push(`order ${flow.scope.key}`)));
    const charge = await flow.remote('charge', async (key) => {
      charges.push(key);
      return { id: key.slice(0, 8) };
    });
    if (crash) await never;
    await flow.atomic('receipt', (tx) => tx.onCommit(() => rows.push(`receipt ${flow.scope.key}`)));
    return { status: 201, body: { charge: charge.id } };
  };
  const request = (key: string, operation = 'payments.create.v1') => ({ tenant: 't', operation, key, request: { amount: 1 } });
  return { clock, store, engine, rows, charges, payment, request };
}

/** Lets abandoned attempts run up to where they hang. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('createCompleter: finishes flows whose owner went away', () => {
  it('four completers racing over ten abandoned flows finish each exactly once, and the client then replays the recorded result', async () => {
    const { clock, store, engine, rows, charges, payment, request } = world();
    const keys = Array.from({ length: 10 }, (_, index) => `k-${index}`);
    for (const key of keys) void engine.flow(request(key), payment(true));
    await settle();
    clock.advance(LEASE + 1);
    const events: CompleterEvent[] = [];
    const completers = Array.from({ length: 4 }, (_, index) =>
      createCompleter({ store, flows: { 'payments.create.v1': payment(false) }, clock, leaseMs: LEASE, name: `c${index}`, onEvent: (event) => events.push(event) }),
    );
    const rounds = await Promise.all(completers.map((completer) => completer.runOnce()));
    expect(rounds.reduce((sum, round) => sum + round.completed, 0)).toBe(10);
    expect(events.filter((event) => event.type === 'flow_completed').map((event) => 'scope' in event && event.scope.key).sort()).toEqual([...keys].sort());
    expect(rows.filter((row) => row.startsWith('order')).length).toBe(10);
    expect(rows.filter((row) => row.startsWith('receipt')).length).toBe(10);
    expect(new Set(charges).size).toBe(10);
    for (const key of keys) {
      const replay = await engine.flow(request(key), payment(false));
      expect(replay).toEqual({ kind: 'replayed', state: 'succeeded', response: (await store.get({ ...request(key), principal: '' }))?.response });
    }
  });

  it('a flow whose code changed is recorded as failed_final with a problem body; an unknown operation is left for another completer', async () => {
    const { clock, store, engine, payment, request } = world();
    void engine.flow(request('changed'), payment(true));
    void engine.flow(request('other', 'refunds.create.v1'), payment(true));
    await settle();
    clock.advance(LEASE + 1);
    const changed = async (flow: Flow<MemoryFlowTx>) => {
      await flow.atomic('renamed', () => 1);
      return { status: 200 };
    };
    const completer = createCompleter({ store, flows: { 'payments.create.v1': changed }, clock, leaseMs: LEASE });
    expect(await completer.runOnce()).toEqual({ completed: 0, failedFinal: 1, skipped: 1, errors: 0 });
    const record = await store.get({ ...request('changed'), principal: '' });
    expect(record?.state).toBe('failed_final');
    expect(record?.response).toMatchObject({ status: 500, body: { code: 'invalid_state' } });
    expect((await engine.flow(request('changed'), payment(false))).kind).toBe('replayed');
    expect((await store.get({ ...request('other', 'refunds.create.v1'), principal: '' }))?.state).toBe('in_progress');
  });

  it('runs on backgroundLoop: start, a flow finished in the background, stop; bad options are typed errors', async () => {
    const { store, payment, request } = world();
    const real = memoryStore();
    const realEngine = createIdempotency({ store: real, leaseMs: 50 });
    void realEngine.flow(request('bg'), payment(true));
    const completer = createCompleter({ store: real, flows: { 'payments.create.v1': payment(false) }, leaseMs: 1_000, intervalMs: 10 });
    await completer.start();
    for (let wait = 0; wait < 200 && (await real.get({ ...request('bg'), principal: '' }))?.state !== 'succeeded'; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await completer.stop();
    expect((await real.get({ ...request('bg'), principal: '' }))?.state).toBe('succeeded');
    expect(completer.status).toBe('stopped');
    const plain = { ...store, capabilities: { transactions: false, nativeTtl: false } };
    expect(() => createCompleter({ store: plain, flows: {} })).toThrow(expect.objectContaining({ code: 'capability_missing' }));
    expect(() => createCompleter({ store, flows: {}, batchSize: 0 })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => createCompleter({ store, flows: undefined as never })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });
});
