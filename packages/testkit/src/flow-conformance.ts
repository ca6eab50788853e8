import { type FlowStore, isFlowStore } from '@oncely/core/adapter';
import type { Scope } from '@oncely/core';
import { type ClauseId, clauseExpect, resourceTest } from './clause.js';
import { sleep, type TestRunner, uniqueKey } from './runner.js';

/** Options of {@link runFlowConformance}. */
export interface FlowConformanceOptions<S extends FlowStore<Tx>, Tx> {
  /** Prefixes every test name, e.g. `postgres flows`. */
  readonly name: string;
  /** A ready store; called once per test. */
  readonly createStore: () => S | Promise<S>;
  /** Closes what `createStore` made (default `store.close()`). */
  readonly closeStore?: (store: S) => Promise<void>;
  /** A business write in the phase's transaction, named `label` (an INSERT, an `onCommit` push). */
  readonly write: (tx: Tx, label: string) => Promise<void> | void;
  /** How many committed writes named `label` the store's storage holds. */
  readonly count: (store: S, label: string) => Promise<number>;
  /** Lets the store's clock move (default: real sleep). */
  readonly advanceTime?: (ms: number) => Promise<void>;
  /** The short lease of the lapse tests (default 300 ms). */
  readonly shortLeaseMs?: number;
  /** Concurrent advances in the race test (default 10). */
  readonly raceSize?: number;
  readonly timeoutMs?: number;
}

const LONG = 60_000;
const DAY = 86_400_000;
const MARGIN = 150;
const PRINT = 'e'.repeat(64);

/**
 * The flow store contract (`FlowStore`, clauses `flow.*`) as tests: opening and resuming a flow,
 * recovery points committed with the phase's writes or not at all, fencing by the lease token, the
 * position check, concurrent advances, and the list of abandoned flows a completer reads.
 *
 * ```ts
 * runFlowConformance({ describe, it, expect }, { name: 'memory flows', createStore: () => memoryStore(),
 *   write: (tx, label) => tx.onCommit(() => rows.push(label)), count: async (_, label) => rows.filter((row) => row === label).length });
 * ```
 */
export function runFlowConformance<S extends FlowStore<Tx>, Tx>(runner: TestRunner, options: FlowConformanceOptions<S, Tx>): void {
  const { describe } = runner;
  const must = clauseExpect(runner.expect);
  const lease = options.shortLeaseMs ?? 300;
  const raceSize = options.raceSize ?? 10;
  const advanceTime = options.advanceTime ?? sleep;
  const close = (store: S) => (options.closeStore ? options.closeStore(store) : store.close());
  const test = resourceTest(runner.it, options.timeoutMs ?? 30_000, options.createStore, close);
  const scopeOf = (label: string): Scope => ({ tenant: 'tenant-f', principal: 'p', operation: 'flows.test.v1', key: uniqueKey(label) });
  const claim = (store: S, scope: Scope, token: string, leaseMs = LONG, retentionMs = DAY) =>
    store.claim({ scope, token, fingerprint: PRINT, leaseMs, retentionMs });
  const input = (scope: Scope, token: string, position: number, name = `phase-${position}`, kind: 'atomic' | 'remote' = 'atomic') => ({
    scope,
    token,
    position,
    name,
    kind,
    leaseMs: LONG,
  });
  /** Claims and opens a flow; returns the holder's token. */
  const opened = async (store: S, scope: Scope, leaseMs = LONG, request = '{"amount":10}') => {
    const token = uniqueKey('tok');
    must('flow.open.first', 'the first claim was not claimed', (await claim(store, scope, token, leaseMs)).kind).toBe('claimed');
    await store.openFlow({ scope, token, request });
    return token;
  };
  /** An advance whose work writes `label` and records `result`; `ran` says whether work ran. */
  const writing = (label: string, result: string | undefined = '{"ok":true}') => {
    const state = { ran: false };
    const work = async (tx: Tx) => {
      state.ran = true;
      await options.write(tx, label);
      return { result, value: label };
    };
    return { state, work };
  };
  const id = (clause: ClauseId) => [clause];

  describe(`${options.name}: flows`, () => {
    test(id('flow.capability'), 'capabilities.flows is true and the flow methods exist', async (store) => {
      must('flow.capability', 'the store does not declare flows', store.capabilities.flows).toBe(true);
      must('flow.capability', 'isFlowStore refused the store', isFlowStore(store)).toBe(true);
    });

    test(id('flow.open.first'), "the holder's first openFlow records the request and no phases", async (store) => {
      const scope = scopeOf('first');
      const token = uniqueKey('tok');
      await claim(store, scope, token);
      must('flow.open.first', 'a new flow is not the request with no phases', await store.openFlow({ scope, token, request: '{"a":[1,"é"]}' })).toEqual({
        request: '{"a":[1,"é"]}',
        phases: [],
      });
    });

    test(id('flow.open.resume'), 'openFlow after phases, by the owner and after a takeover, returns the first request and every phase exactly', async (store) => {
      const scope = scopeOf('resume');
      const token = await opened(store, scope, lease);
      const order = writing('resume-order', '{"id":"ord_1","note":"naïve ✓"}');
      must('flow.open.resume', 'the first advance did not commit', (await store.advance(input(scope, token, 0, 'order'), order.work)).kind).toBe('advanced');
      const charge = await store.advance(input(scope, token, 1, 'charge', 'remote'), async () => ({ result: undefined, value: 1 }));
      must('flow.open.resume', 'the second advance did not commit', charge.kind).toBe('advanced');
      const phases = [
        { name: 'order', kind: 'atomic', result: '{"id":"ord_1","note":"naïve ✓"}' },
        { name: 'charge', kind: 'remote' },
      ];
      must('flow.open.resume', 'the owner reads back other phases', await store.openFlow({ scope, token, request: '{"other":1}' })).toEqual({
        request: '{"amount":10}',
        phases,
      });
      // The advances renewed the lease for LONG: the takeover needs a lapse, so the owner cuts it.
      await store.extend({ scope, token, leaseMs: 1 });
      await advanceTime(MARGIN);
      const next = uniqueKey('tok');
      must('flow.open.resume', 'the lapsed flow was not taken over', (await claim(store, scope, next)).kind).toBe('claimed');
      must('flow.open.resume', 'a takeover does not resume the recorded flow', await store.openFlow({ scope, token: next, request: '{"other":2}' })).toEqual({
        request: '{"amount":10}',
        phases,
      });
    });

    test(id('flow.open.fenced'), 'openFlow by a token that does not hold the lease answers fence_lost and records nothing', async (store) => {
      const scope = scopeOf('open-fenced');
      must('flow.open.fenced', 'openFlow on an absent key was accepted', await store.openFlow({ scope, token: 'nobody', request: '1' })).toBe('fence_lost');
      must('flow.open.fenced', 'openFlow on an absent key created a record', await store.get(scope)).toBeUndefined();
      const token = uniqueKey('tok');
      await claim(store, scope, token);
      must('flow.open.fenced', "openFlow by another token was accepted", await store.openFlow({ scope, token: 'intruder', request: '"intruder"' })).toBe('fence_lost');
      must('flow.open.fenced', "the intruder's request was recorded", (await store.openFlow({ scope, token, request: '"owner"' })) as unknown).toEqual({
        request: '"owner"',
        phases: [],
      });
      const lapsing = scopeOf('open-lapsed');
      const owner = uniqueKey('tok');
      await claim(store, lapsing, owner, lease);
      await advanceTime(lease + MARGIN);
      must('flow.open.fenced', 'openFlow by a lapsed owner was accepted', await store.openFlow({ scope: lapsing, token: owner, request: '1' })).toBe('fence_lost');
    });

    test(id('flow.open.fresh'), 'a record claimed afresh after a release or an expiry has no flow of its earlier life', async (store) => {
      const scope = scopeOf('fresh');
      const token = await opened(store, scope);
      await store.advance(input(scope, token, 0), writing('fresh-a').work);
      must('flow.open.fresh', 'the holder could not release', await store.release({ scope, token })).toBe('ok');
      const again = await opened(store, scope, LONG, '"second life"');
      must('flow.open.fresh', 'a released record resumed its old flow', await store.openFlow({ scope, token: again, request: '"x"' })).toEqual({
        request: '"second life"',
        phases: [],
      });
      const expiring = scopeOf('fresh-expiry');
      const first = uniqueKey('tok');
      await claim(store, expiring, first, lease, lease);
      await store.openFlow({ scope: expiring, token: first, request: '"first life"' });
      await store.advance({ ...input(expiring, first, 0), leaseMs: lease }, writing('fresh-b').work);
      await advanceTime(2 * lease + MARGIN);
      must('flow.open.fresh', 'the record did not expire', await store.get(expiring)).toBeUndefined();
      const second = await opened(store, expiring, LONG, '"second life"');
      must('flow.open.fresh', 'an expired record resumed its old flow', await store.openFlow({ scope: expiring, token: second, request: '"x"' })).toEqual({
        request: '"second life"',
        phases: [],
      });
    });

    test(id('flow.advance.commit'), "advance commits the phase's writes and the recovery point together, and renews the lease", async (store) => {
      const scope = scopeOf('commit');
      const token = await opened(store, scope, lease);
      const phase = writing('commit-write', '[1,2.5,null,"x"]');
      const result = await store.advance(input(scope, token, 0, 'write'), phase.work);
      must('flow.advance.commit', 'advance did not answer advanced with the value', result).toEqual({ kind: 'advanced', value: 'commit-write' });
      must('flow.advance.commit', 'the write was not committed exactly once', await options.count(store, 'commit-write')).toBe(1);
      const state = await store.openFlow({ scope, token, request: '0' });
      must('flow.advance.commit', 'the recovery point was not recorded', state === 'fence_lost' ? state : state.phases).toEqual([
        { name: 'write', kind: 'atomic', result: '[1,2.5,null,"x"]' },
      ]);
      await advanceTime(lease + MARGIN);
      must('flow.advance.commit', 'the advance did not renew the lease', (await claim(store, scope, uniqueKey('tok'))).kind).toBe('existing');
    });

    test(id('flow.advance.rollback'), 'when work throws, neither its writes nor the recovery point are kept, and the error passes unchanged', async (store) => {
      const scope = scopeOf('rollback');
      const token = await opened(store, scope);
      const failure = new Error('phase failed');
      let thrown: unknown;
      try {
        await store.advance(input(scope, token, 0), async (tx) => {
          await options.write(tx, 'rollback-write');
          throw failure;
        });
      } catch (error) {
        thrown = error;
      }
      must('flow.advance.rollback', "work's error did not reach the caller unchanged", thrown).toBe(failure);
      must('flow.advance.rollback', 'the write of a failed phase was kept', await options.count(store, 'rollback-write')).toBe(0);
      const state = await store.openFlow({ scope, token, request: '0' });
      must('flow.advance.rollback', 'a failed phase left a recovery point', state === 'fence_lost' ? state : state.phases).toEqual([]);
      must('flow.advance.rollback', 'the position is not free again', (await store.advance(input(scope, token, 0), writing('rollback-retry').work)).kind).toBe('advanced');
    });

    test(id('flow.advance.fenced'), 'another token, a lapsed owner, and a lapsed owner after a takeover answer fence_lost; work never runs', async (store) => {
      const scope = scopeOf('fenced');
      const token = await opened(store, scope, lease);
      const intruder = writing('fenced-intruder');
      must('flow.advance.fenced', 'an advance by another token was accepted', (await store.advance(input(scope, 'intruder', 0), intruder.work)).kind).toBe('fence_lost');
      must('flow.advance.fenced', "another token's work ran", intruder.state.ran).toBe(false);
      await advanceTime(lease + MARGIN);
      const lapsed = writing('fenced-lapsed');
      must('flow.advance.fenced', 'a lapsed owner advanced', (await store.advance(input(scope, token, 0), lapsed.work)).kind).toBe('fence_lost');
      must('flow.advance.fenced', "a lapsed owner's work ran", lapsed.state.ran).toBe(false);
      await claim(store, scope, uniqueKey('tok'));
      const stale = writing('fenced-stale');
      must('flow.advance.fenced', 'the old owner advanced after a takeover', (await store.advance(input(scope, token, 0), stale.work)).kind).toBe('fence_lost');
      must('flow.advance.fenced', 'a fenced advance wrote', (await options.count(store, 'fenced-intruder')) + (await options.count(store, 'fenced-lapsed')) + (await options.count(store, 'fenced-stale'))).toBe(0);
    });

    test(id('flow.advance.position'), 'a position other than the number of recorded phases answers out_of_order; work never runs', async (store) => {
      const scope = scopeOf('position');
      const token = await opened(store, scope);
      const ahead = writing('position-ahead');
      must('flow.advance.position', 'a skipped position was accepted', (await store.advance(input(scope, token, 1), ahead.work)).kind).toBe('out_of_order');
      must('flow.advance.position', 'work of a skipped position ran', ahead.state.ran).toBe(false);
      await store.advance(input(scope, token, 0), writing('position-0').work);
      const behind = writing('position-behind');
      must('flow.advance.position', 'a recorded position was written again', (await store.advance(input(scope, token, 0), behind.work)).kind).toBe('out_of_order');
      must('flow.advance.position', 'work of a recorded position ran', behind.state.ran).toBe(false);
      must('flow.advance.position', 'an out-of-order advance wrote', await options.count(store, 'position-behind')).toBe(0);
    });

    test(id('flow.advance.race'), 'of concurrent advances to one position by the holder exactly one commits', async (store) => {
      const scope = scopeOf('race');
      const token = await opened(store, scope);
      const label = `race-${uniqueKey('w')}`;
      const results = await Promise.all(Array.from({ length: raceSize }, () => store.advance(input(scope, token, 0), writing(label).work)));
      must('flow.advance.race', 'not exactly one advance committed', results.filter((result) => result.kind === 'advanced').length).toBe(1);
      must('flow.advance.race', 'the losers did not answer out_of_order', results.filter((result) => result.kind === 'out_of_order').length).toBe(raceSize - 1);
      must('flow.advance.race', 'more than one write was kept', await options.count(store, label)).toBe(1);
    });

    test(id('flow.abandoned.lapsed'), 'listAbandonedFlows lists opened flows whose lease lapsed, none held, finished or never opened', async (store) => {
      const abandoned = scopeOf('abandoned');
      await opened(store, abandoned, lease);
      const unopened = scopeOf('unopened');
      await claim(store, unopened, uniqueKey('tok'), lease);
      const held = scopeOf('held');
      await opened(store, held);
      const finished = scopeOf('finished');
      const finisher = await opened(store, finished, lease);
      await store.complete({ scope: finished, token: finisher, state: 'succeeded', response: { status: 200 }, retentionMs: DAY });
      await advanceTime(lease + MARGIN);
      const keys = new Set([abandoned, unopened, held, finished].map((scope) => scope.key));
      const listed = (await store.listAbandonedFlows(1_000)).filter((flow) => keys.has(flow.scope.key));
      must('flow.abandoned.lapsed', 'the list is not exactly the abandoned flow', listed).toEqual([{ scope: abandoned, fingerprint: PRINT }]);
      must('flow.abandoned.lapsed', 'the limit was not honoured', (await store.listAbandonedFlows(1)).length).toBeLessThanOrEqual(1);
    });
  });
}
