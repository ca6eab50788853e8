import { describe, expect, it } from 'vitest';
import { createIdempotency, downstreamKey, type Flow, isOncelyError, type MemoryFlowTx, memoryStore } from '../../src/index.js';

/** A tiny ledger whose writes land only when a phase commits. */
function ledger() {
  const rows: string[] = [];
  const write = (tx: MemoryFlowTx, row: string) => tx.onCommit(() => rows.push(row));
  return { rows, write };
}

const request = (key: string, payload: unknown = { amount: 10 }) => ({ tenant: 't', operation: 'payments.create.v1', key, request: payload });
const code = (name: string) => (error: unknown) => isOncelyError(error, name as never);

function setup(leaseMs = 10_000) {
  let now = 1_000;
  const clock = { now: () => now, sleep: () => new Promise<void>(() => undefined) };
  const store = memoryStore({ clock });
  const engine = createIdempotency({ store, leaseMs, clock });
  return { store, engine, advance: (ms: number) => void (now += ms) };
}

describe('idempotency.flow: atomic phases, remote steps and recovery points', () => {
  it('runs phases in order, hands the remote step its derived key, and replays the final response', async () => {
    const { engine } = setup();
    const { rows, write } = ledger();
    const seen: string[] = [];
    const body = async (flow: Flow<MemoryFlowTx>) => {
      const order = await flow.atomic('order', (tx) => {
        write(tx, 'order');
        return { id: 'ord_1' };
      });
      const charge = await flow.remote('stripe.charge', async (key) => {
        seen.push(key);
        return { chargeId: `ch_${key.slice(0, 6)}` };
      });
      await flow.atomic('receipt', (tx) => write(tx, `receipt ${order.id} ${charge.chargeId}`));
      return { status: 201, body: { order: order.id, charge: charge.chargeId } };
    };
    const first = await engine.flow(request('k-1'), body);
    expect(first.kind).toBe('executed');
    expect(seen).toEqual([await downstreamKey({ tenant: 't', principal: '', operation: 'payments.create.v1', key: 'k-1' }, 'stripe.charge')]);
    expect(rows).toEqual(['order', `receipt ord_1 ch_${seen[0]!.slice(0, 6)}`]);
    const again = await engine.flow(request('k-1'), body);
    expect(again).toEqual({ kind: 'replayed', state: 'succeeded', response: first.kind === 'executed' ? first.response : undefined });
    expect(rows.length).toBe(2);
    expect(seen.length).toBe(1);
  });

  it('a retry after a crash skips completed phases and replays their recorded results', async () => {
    const { engine, advance } = setup(1_000);
    const { rows, write } = ledger();
    let calls = 0;
    const crash = new Error('process died');
    const body = (crashAfter: number) => async (flow: Flow<MemoryFlowTx>) => {
      const order = await flow.atomic('order', (tx) => {
        write(tx, 'order');
        return { id: `ord_${rows.length}` };
      });
      const charge = await flow.remote('charge', async () => ({ n: ++calls }));
      if (crashAfter === 2) throw crash;
      await flow.atomic('receipt', (tx) => write(tx, `receipt ${order.id} ${charge.n}`));
      return { status: 201, body: { order, charge } };
    };
    await expect(engine.flow(request('k-2'), body(2))).rejects.toBe(crash);
    advance(10);
    const resumed = await engine.flow(request('k-2'), body(3));
    expect(resumed.kind === 'executed' && resumed.response.body).toEqual({ order: { id: 'ord_0' }, charge: { n: 1 } });
    expect(rows).toEqual(['order', 'receipt ord_0 1']);
    expect(calls).toBe(1);
  });

  it('a changed flow (names, order or kind) is an invalid_state error and writes nothing', async () => {
    const { engine, store, advance } = setup();
    const { rows, write } = ledger();
    await expect(
      engine.flow(request('k-3'), async (flow) => {
        await flow.atomic('order', (tx) => write(tx, 'order'));
        throw new Error('crash');
      }),
    ).rejects.toThrow('crash');
    for (const changed of [
      async (flow: Flow<MemoryFlowTx>) => {
        await flow.atomic('renamed', (tx) => write(tx, 'renamed'));
        return { status: 200 };
      },
      async (flow: Flow<MemoryFlowTx>) => {
        await flow.remote('order', async () => 1);
        return { status: 200 };
      },
      async () => ({ status: 200 }),
    ]) {
      advance(10);
      await expect(engine.flow(request('k-3'), changed)).rejects.toSatisfy(code('invalid_state'));
    }
    expect(rows).toEqual(['order']);
    expect((await store.get({ tenant: 't', principal: '', operation: 'payments.create.v1', key: 'k-3' }))?.state).toBe('in_progress');
  });

  it('a phase returning non-JSON, a non-JSON response body, and phases outside the flow are invalid_state errors; nothing half-written', async () => {
    const { engine } = setup();
    const { rows, write } = ledger();
    await expect(
      engine.flow(request('k-4'), async (flow) => {
        await flow.atomic('order', (tx) => {
          write(tx, 'order');
          return { at: new Date() };
        });
        return { status: 200 };
      }),
    ).rejects.toSatisfy(code('invalid_state'));
    expect(rows).toEqual([]);
    await expect(engine.flow(request('k-5'), async (flow) => {
      await flow.remote('charge', async () => Number.NaN);
      return { status: 200 };
    })).rejects.toSatisfy(code('invalid_state'));
    await expect(engine.flow(request('k-6'), async () => ({ status: 200, body: { big: 1n } }))).rejects.toSatisfy(code('invalid_state'));
    let escaped: Flow<MemoryFlowTx> | undefined;
    await engine.flow(request('k-7'), async (flow) => {
      escaped = flow;
      return { status: 200 };
    });
    await expect(escaped!.remote('late', async () => 1)).rejects.toSatisfy(code('invalid_state'));
    await expect(escaped!.atomic('late', (tx) => write(tx, 'late'))).rejects.toSatisfy(code('invalid_state'));
    await expect(engine.flow(request('k-8'), async (flow) => {
      await Promise.all([flow.atomic('a', () => 1), flow.atomic('b', () => 2)]);
      return { status: 200 };
    })).rejects.toSatisfy(code('invalid_state'));
    expect(rows).toEqual([]);
    await expect(engine.flow(request('k-9', () => 1), async () => ({ status: 200 }))).rejects.toSatisfy(code('invalid_state'));
  });

  it('a lapsed owner cannot advance: its phase writes are dropped and it gets lease_lost', async () => {
    const { engine, advance } = setup(1_000);
    const { rows, write } = ledger();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = engine.flow(request('k-10'), async (flow) => {
      await flow.atomic('order', async (tx) => {
        write(tx, 'stale order');
        await gate;
      });
      return { status: 200 };
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    advance(2_000);
    const second = await engine.flow(request('k-10'), async (flow) => {
      await flow.atomic('order', (tx) => write(tx, 'order'));
      return { status: 201 };
    });
    release();
    await expect(first).rejects.toSatisfy(code('lease_lost'));
    expect(second.kind).toBe('executed');
    expect(rows).toEqual(['order']);
  });

  it("a phase's own error reaches the caller unchanged; a store failure is a StorageError", async () => {
    const { engine, store } = setup();
    const mine = new Error('the phase failed');
    await expect(engine.flow(request('k-13'), async (flow) => {
      await flow.atomic('order', () => {
        throw mine;
      });
      return { status: 200 };
    })).rejects.toBe(mine);
    const broken = { ...store, advance: async () => { throw new Error('connection reset'); } };
    const failing = createIdempotency({ store: broken });
    await expect(failing.flow(request('k-14'), async (flow) => {
      await flow.atomic('order', () => 1);
      return { status: 200 };
    })).rejects.toSatisfy((error) => isOncelyError(error, 'storage_error'));
  });

  it('a thrown error before any recovery point releases the record, so the retry starts afresh', async () => {
    const { engine, store } = setup();
    await expect(engine.flow(request('k-11'), async () => {
      throw new Error('early');
    })).rejects.toThrow('early');
    expect(await store.get({ tenant: 't', principal: '', operation: 'payments.create.v1', key: 'k-11' })).toBeUndefined();
  });

  it('a store without flows is a capability_missing error', async () => {
    const plain = memoryStore();
    const engine = createIdempotency({ store: { ...plain, capabilities: { transactions: false, nativeTtl: false } } });
    await expect(engine.flow(request('k-12'), async () => ({ status: 200 }))).rejects.toSatisfy(code('capability_missing'));
  });
});
