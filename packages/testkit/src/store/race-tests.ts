import type { IdempotencyStore, Scope } from '@oncely/core';
import type { ClaimResult } from '@oncely/core/adapter';
import { uniqueKey, type TestRunner } from '../runner.js';
import { claimInput, completeInput, LONG, MARGIN, scopeOf, storeHarness } from './harness.js';
import type { StoreConformanceOptions } from './options.js';
import { warmUp } from './race.js';

type LeaseCall = 'complete' | 'release' | 'extend';

const claimedIndexes = (results: readonly ClaimResult[]) => results.flatMap((result, index) => (result.kind === 'claimed' ? [index] : []));

/**
 * Group `races`: attempts that really overlap. Each race runs `raceRounds` rounds on fresh keys, on a
 * store warmed first, with every attempt started in one tick: concurrent first claims, concurrent
 * takeovers of a lapsed lease, an owner's own completes, release and extend sent together, and the
 * owner's complete, release or extend racing takeovers across the instant its lease lapses.
 */
export function storeRaceTests<S extends IdempotencyStore>(runner: TestRunner, options: StoreConformanceOptions<S>): void {
  const { test, must, lease, advance, raceSize, raceRounds, raceLease, timeout } = storeHarness(runner, options);
  const half = Math.floor(raceSize / 2);
  const raceTimeout = timeout * 2;

  runner.describe(`${options.name}: races`, () => {
    test(
      ['store.claim.atomic'],
      `${raceSize} first claims of one key started together on a warm store: exactly one owns it (${raceRounds} rounds)`,
      async (store) => {
        await warmUp(store, raceSize);
        for (let round = 1; round <= raceRounds; round++) {
          const scope = scopeOf(uniqueKey('claim-race'));
          const results = await Promise.all(Array.from({ length: raceSize }, (_, i) => store.claim(claimInput(scope, `racer-${i}`))));
          const winners = claimedIndexes(results);
          must('store.claim.atomic', `${winners.length} of ${raceSize} concurrent first claims were answered claimed (round ${round})`, winners.length).toBe(1);
          const winner = winners[0]!;
          must('store.claim.atomic', 'the winner of a first-claim race was not answered fence 1', results[winner]).toEqual({ kind: 'claimed', fence: 1, takeover: false });
          for (const result of results) {
            if (result.kind === 'existing') must('store.claim.atomic', 'a loser of a first-claim race saw another record', [result.record.state, result.record.fence]).toEqual(['in_progress', 1]);
          }
          const loser = (winner + 1) % raceSize;
          must('store.claim.atomic', 'a loser of a first-claim race could complete', await store.complete(completeInput(scope, `racer-${loser}`))).toBe('fence_lost');
          must('store.claim.atomic', 'the winner of a first-claim race could not complete', await store.complete(completeInput(scope, `racer-${winner}`))).toBe('ok');
        }
      },
      raceTimeout,
    );

    test(
      ['store.claim.takeover-atomic'],
      `${raceSize} takeovers of one lapsed lease started together: exactly one wins, with fence + 1 (${raceRounds} rounds)`,
      async (store) => {
        const scopes = Array.from({ length: raceRounds }, () => scopeOf(uniqueKey('takeover-race')));
        await Promise.all(scopes.map((scope) => store.claim(claimInput(scope, 'crashed', { leaseMs: lease }))));
        await warmUp(store, raceSize);
        await advance(lease + MARGIN);
        for (const [index, scope] of scopes.entries()) {
          const round = index + 1;
          const results = await Promise.all(Array.from({ length: raceSize }, (_, i) => store.claim(claimInput(scope, `racer-${i}`))));
          const winners = claimedIndexes(results);
          must('store.claim.takeover-atomic', `${winners.length} of ${raceSize} concurrent takeovers of one lapsed lease won (round ${round})`, winners.length).toBe(1);
          const winner = winners[0]!;
          must('store.claim.takeover-atomic', 'the winner of a takeover race was not answered fence 2', results[winner]).toEqual({ kind: 'claimed', fence: 2, takeover: true });
          for (const result of results) {
            if (result.kind === 'existing') {
              must('store.claim.takeover-atomic', "a loser of a takeover race did not see the winner's record", [result.record.state, result.record.fence]).toEqual(['in_progress', 2]);
            }
          }
          must('store.claim.takeover-atomic', 'the crashed owner could complete after the takeover race', await store.complete(completeInput(scope, 'crashed'))).toBe('fence_lost');
          must('store.claim.takeover-atomic', 'the winner of a takeover race could not complete', await store.complete(completeInput(scope, `racer-${winner}`))).toBe('ok');
        }
      },
      raceTimeout,
    );

    test(
      ['store.cas.atomic'],
      `an owner's two completes, release and extend sent together: exactly one of them ends the lease, and the record shows which (${raceRounds} rounds)`,
      async (store) => {
        await warmUp(store, raceSize);
        type Call = 'complete-a' | 'complete-b' | 'release' | 'extend';
        const calls: Call[] = ['complete-a', 'complete-b', 'release', 'extend'];
        const responses = { 'complete-a': { status: 201, body: 'a' }, 'complete-b': { status: 201, body: 'b' } };
        for (let round = 1; round <= raceRounds; round++) {
          const scope = scopeOf(uniqueKey('cas-race'));
          const owner = { scope, token: 'owner' };
          await store.claim(claimInput(scope, 'owner'));
          // A random order each round, so every pair meets in both orders.
          const order = calls.map((name) => ({ name, at: Math.random() })).sort((a, b) => a.at - b.at).map(({ name }) => name);
          const answers = await Promise.all(
            order.map((name) =>
              name === 'release' ? store.release(owner) : name === 'extend' ? store.extend({ ...owner, leaseMs: LONG }) : store.complete(completeInput(scope, 'owner', { response: responses[name] })),
            ),
          );
          const said = Object.fromEntries(order.map((name, i) => [name, answers[i]])) as Record<Call, string>;
          const enders = (['complete-a', 'complete-b', 'release'] as const).filter((name) => said[name] === 'ok');
          must('store.cas.atomic', `${enders.length} of one owner's concurrent calls ended its lease (${enders.join(', ') || 'none'}; round ${round})`, enders.length).toBe(1);
          const record = await store.get(scope);
          if (enders[0] === 'release') {
            must('store.cas.atomic', `the accepted release left a record (round ${round})`, record).toBeUndefined();
          } else {
            const expected = responses[enders[0]!];
            must('store.cas.atomic', `the stored outcome is not the accepted complete's (round ${round})`, [record?.state, record?.response]).toEqual(['succeeded', expected]);
            must('store.cas.atomic', `the owner could still extend after its complete (round ${round})`, await store.extend({ ...owner, leaseMs: LONG })).toBe('fence_lost');
          }
        }
      },
      raceTimeout,
    );

    const straddle = (method: LeaseCall) => {
      const clause = `store.${method}.race`;
      const what = { complete: 'completes', release: 'releases', extend: 'extends' }[method];
      test(
        [clause],
        `an owner that ${what} as its lease lapses, raced by takeovers: never both (${raceRounds} rounds)`,
        async (store) => {
          await warmUp(store, raceSize);
          // The rounds run side by side on their own keys, in lock step, so they cost the time of one.
          const scopes = Array.from({ length: raceRounds }, () => scopeOf(uniqueKey(`${method}-race`)));
          await Promise.all(scopes.map((scope) => store.claim(claimInput(scope, 'owner', { leaseMs: raceLease }))));
          const contend = (scope: Scope, from: number, count: number) =>
            Array.from({ length: count }, (_, i) => store.claim(claimInput(scope, `contender-${from + i}`)));
          const call = (scope: Scope) =>
            method === 'complete'
              ? store.complete(completeInput(scope, 'owner'))
              : method === 'extend'
                ? store.extend({ scope, token: 'owner', leaseMs: LONG })
                : store.release({ scope, token: 'owner' });
          // The owner's call goes out a millisecond before the lapse with half the contenders, the other half just after it.
          await advance(raceLease - 1);
          const answers = scopes.map(call);
          const early = scopes.map((scope) => contend(scope, 0, half));
          await advance(2);
          const late = scopes.map((scope) => contend(scope, half, raceSize - half));
          const rounds = await Promise.all(
            scopes.map(async (scope, index) => ({ scope, said: await answers[index]!, results: await Promise.all([...early[index]!, ...late[index]!]) })),
          );
          for (const [index, { scope, said, results }] of rounds.entries()) {
            const round = index + 1;
            const winners = claimedIndexes(results);
            must(clause, `${winners.length} claims won a key while its owner ${what} it (round ${round})`, winners.length).toBeLessThanOrEqual(1);
            const winner = winners[0] === undefined ? undefined : results[winners[0]];
            if (said === 'ok' && method !== 'release') {
              must(clause, `${method} was accepted and a takeover won too: two owners (round ${round})`, winner).toBeUndefined();
              must(clause, `the owner could not complete after its accepted ${method} (round ${round})`, method === 'extend' ? await store.complete(completeInput(scope, 'owner')) : 'ok').toBe('ok');
              must(clause, `the record does not hold the owner's outcome after the race (round ${round})`, (await store.get(scope))?.state).toBe('succeeded');
            } else if (winner) {
              const expected = said === 'ok' ? { kind: 'claimed', fence: 1, takeover: false } : { kind: 'claimed', fence: 2, takeover: true };
              const story = said === 'ok' ? 'a fresh claim after the release' : `a takeover after the refused ${method}`;
              must(clause, `${method} answered ${said} but the winning claim was not ${story} (round ${round})`, winner).toEqual(expected);
              must(clause, `the winner lost its record to the owner's ${method} (round ${round})`, await store.complete(completeInput(scope, `contender-${winners[0]}`))).toBe('ok');
            }
          }
        },
        raceTimeout,
      );
    };
    straddle('complete');
    straddle('release');
    straddle('extend');
  });
}
