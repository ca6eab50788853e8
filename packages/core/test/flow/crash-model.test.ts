import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCompleter, createIdempotency, type Flow, type FlowBody, manualClock, type MemoryFlowTx, memoryStore } from '../../src/index.js';

type Step = 'atomic' | 'remote';
/** Where an attempt dies: before phase `at`, or inside it (an atomic phase before it commits, a remote step after the provider answered). */
interface Crash {
  readonly at: number;
  readonly inside: boolean;
}

const never = new Promise<never>(() => undefined);
const LEASE = 1_000;

describe('a fast-check model of crash points over flows of random length (memory store)', () => {
  it('whatever the crashes and whoever finishes, each local phase commits once, each remote step sees one distinct key, and the answer is the recorded one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Step>('atomic', 'remote'), { minLength: 1, maxLength: 6 }),
        fc.array(fc.record({ at: fc.nat(6), inside: fc.boolean() }), { maxLength: 4 }),
        fc.boolean(),
        async (steps, crashes, byCompleter) => {
          const clock = manualClock(Date.UTC(2026, 0, 1));
          const store = memoryStore({ clock });
          const engine = createIdempotency({ store, leaseMs: LEASE, clock });
          const rows: string[] = [];
          const provider = new Map<string, string[]>();
          const bodyWith = (crash: Crash | undefined): FlowBody<MemoryFlowTx> => async (flow: Flow<MemoryFlowTx>) => {
            const results: unknown[] = [];
            for (const [index, step] of steps.entries()) {
              if (crash && crash.at === index && !crash.inside) await never;
              const dies = crash?.at === index && crash.inside;
              const name = `${step}-${index}`;
              if (step === 'atomic') {
                results.push(
                  await flow.atomic(name, async (tx) => {
                    tx.onCommit(() => rows.push(name));
                    if (dies) await never;
                    return { row: name, seen: results.length };
                  }),
                );
              } else {
                results.push(
                  await flow.remote(name, async (key) => {
                    provider.set(name, [...(provider.get(name) ?? []), key]);
                    if (dies) await never;
                    return { charge: `ch_${key.slice(0, 8)}` };
                  }),
                );
              }
            }
            if (crash && crash.at >= steps.length) await never;
            return { status: 201, body: { results } };
          };
          const request = { tenant: 't', operation: 'payments.create.v1', key: 'k-model', request: { steps } };
          for (const crash of crashes) {
            // The process dies: its attempt never settles, and its lease lapses.
            void engine.flow(request, bodyWith(crash));
            await new Promise((resolve) => setImmediate(resolve));
            clock.advance(LEASE + 1);
          }
          let answer: unknown;
          if (byCompleter) {
            const completer = createCompleter({ store, flows: { 'payments.create.v1': bodyWith(undefined) }, clock, leaseMs: LEASE });
            await completer.runOnce();
            const replay = await engine.flow(request, bodyWith(undefined));
            answer = replay.kind === 'replayed' || replay.kind === 'executed' ? replay.response : replay;
          } else {
            const result = await engine.flow(request, bodyWith(undefined));
            answer = result.kind === 'executed' || result.kind === 'replayed' ? result.response : result;
          }
          const atomics = steps.flatMap((step, index) => (step === 'atomic' ? [`atomic-${index}`] : []));
          expect([...rows].sort()).toEqual([...atomics].sort());
          for (const [index, step] of steps.entries()) {
            if (step === 'remote') expect(new Set(provider.get(`remote-${index}`)).size).toBe(1);
          }
          const record = await store.get({ tenant: 't', principal: '', operation: 'payments.create.v1', key: 'k-model' });
          expect(record?.state).toBe('succeeded');
          expect(answer).toEqual(record?.response);
          const again = await engine.flow(request, bodyWith(undefined));
          expect(again.kind === 'replayed' && again.response).toEqual(record?.response);
        },
      ),
      { numRuns: 150 },
    );
  });
});
