import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Process } from '@oncely/test-support';
import { createPool } from '../support/database.js';
import { until, untilStalled } from '../support/wait.js';
import { credit, createPipeline, type Pipeline } from './pipeline.js';
import { assertBuilt, killStarted, startProcess as start } from './processes.js';

const pool = createPool({ max: 12 });
const pipelines: Pipeline[] = [];

const pipeline = async (label: string, partitions?: number) => {
  const created = await createPipeline(pool, label, partitions);
  pipelines.push(created);
  return created;
};

beforeAll(() => assertBuilt());

afterEach(async () => {
  await killStarted();
  await Promise.all(pipelines.splice(0).map((created) => created.close()));
});

afterAll(() => pool.end());

describe('failure boundary 5: the relay dies between the broker’s acknowledgement and the mark', () => {
  it('the event is published again after the lease lapses, and the consumer applies it once', async () => {
    const p = await pipeline('relaykill');
    await p.enqueue([credit('acct-1', 10)]);
    const [stream] = p.streams as [string];

    const doomed = start('relay-process.mjs', p.relayConfig({ pauseAt: 'published', leaseMs: 1_000 }));
    const { eventIds } = await doomed.point('published');
    // The broker has the event; the outbox still says unpublished.
    expect((await p.entries()).map((entry) => entry.eventId)).toEqual(eventIds);
    expect(await p.unpublished()).toBe(1);
    await doomed.kill();

    start('relay-process.mjs', p.relayConfig());
    await until('the event is marked published', async () => (await p.unpublished()) === 0);
    const entries = await p.entries();
    expect(entries.map((entry) => entry.eventId)).toEqual([eventIds![0], eventIds![0]]);

    const consumer = start('consumer-process.mjs', p.consumerConfig('c1', [stream]));
    await consumer.point('duplicate');
    await until('both entries are acknowledged', async () => (await p.pending(stream)) === 0);
    expect((await p.applied()).map((row) => row.event_id)).toEqual([eventIds![0]]);
    expect(await p.balance('acct-1')).toBe(10);
  });
});

describe('failure boundary 6: the consumer dies after its mutation committed, before the acknowledgement', () => {
  for (const recovery of ['another consumer takes the entry over with XAUTOCLAIM', 'the same consumer restarts and re-reads its pending entry']) {
    it(`${recovery}: the redelivery is a duplicate and the mutation is not applied twice`, async () => {
      const p = await pipeline('consumerkill');
      await p.enqueue([credit('acct-1', 25), credit('acct-2', 5)]);
      const [stream] = p.streams as [string];
      start('relay-process.mjs', p.relayConfig());
      await until('both events are published', async () => (await p.unpublished()) === 0);

      const doomed = start('consumer-process.mjs', p.consumerConfig('c1', [stream], { pauseAt: 'applied', batchSize: 1 }));
      const { eventId } = await doomed.point('applied');
      // The mutation committed; the entry is still pending: the ack never happened.
      expect((await p.applied()).map((row) => row.event_id)).toEqual([eventId]);
      expect(await p.pending(stream)).toBe(1);
      await doomed.kill();

      const takeover = recovery.startsWith('another');
      const survivor = start(
        'consumer-process.mjs',
        p.consumerConfig(takeover ? 'c2' : 'c1', [stream], { claimIdleMs: 500, claimIntervalMs: 100 }),
      );
      expect((await survivor.point('duplicate')).eventId).toBe(eventId);
      await until('every entry is applied and acknowledged', async () => (await p.applied()).length === 2 && (await p.pending(stream)) === 0);
      expect((await p.applied()).filter((row) => row.event_id === eventId)).toHaveLength(1);
      expect([await p.balance('acct-1'), await p.balance('acct-2')]).toEqual([25, 5]);
    });
  }
});

describe('3 relays and 2 consumers under random relay kills', () => {
  it('10,000 events over 200 aggregates: every event published at least once, applied exactly once, in aggregate_seq order', async () => {
    const AGGREGATES = 200;
    const PER_AGGREGATE = 50;
    const p = await pipeline('crowd', 2);
    const accounts = Array.from({ length: AGGREGATES }, (_, i) => `acct-${i}`);
    const amountOf = (seq: number) => (seq % 7) + 1;

    // Each stream has one consumer, so each aggregate (routed to one stream) is applied in order.
    const consumers = p.streams.map((stream, index) =>
      start('consumer-process.mjs', p.consumerConfig(`consumer-${index}`, [stream], { batchSize: 100 })),
    );
    let kills = 0;
    let killedAfterPublish = 0;
    const relays: Process[] = [];
    const spawnRelay = () => {
      // Some relays stop at the named point right after the broker acknowledged a batch.
      const relay = start('relay-process.mjs', p.relayConfig({ batchSize: 50, leaseMs: 1_500, pauseAt: Math.random() < 0.3 ? 'published' : undefined }));
      relays.push(relay);
      void relay
        .point('published')
        .then(async () => {
          killedAfterPublish += 1;
          await replace(relay);
        })
        .catch(() => undefined);
    };
    const replace = async (relay: Process) => {
      const index = relays.indexOf(relay);
      if (index < 0) return;
      relays.splice(index, 1);
      kills += 1;
      await relay.kill();
      spawnRelay();
    };
    for (let i = 0; i < 3; i++) spawnRelay();

    // The business keeps writing while relays die: 10,000 events, 50 per account, 100 per transaction,
    // four writers on their own accounts. Every 8th commit SIGKILLs a random relay wherever it is, so
    // the kills happen during the run however fast the machine is.
    const randomKills: Promise<void>[] = [];
    let commits = 0;
    const began = Date.now();
    await Promise.all(
      [0, 1, 2, 3].map(async (writer) => {
        const mine = accounts.slice(writer * 50, writer * 50 + 50);
        for (let seq = 1; seq <= PER_AGGREGATE; seq += 2) {
          await p.enqueue(mine.flatMap((a) => [credit(a, amountOf(seq)), credit(a, amountOf(seq + 1))]));
          commits += 1;
          const victim = relays[Math.floor(Math.random() * relays.length)];
          if (commits % 8 === 0 && victim) randomKills.push(replace(victim));
        }
      }),
    );
    const written = Date.now() - began;
    await Promise.all(randomKills);
    // Under a loaded CI the drain can take a minute; only a pipeline that stops moving for 20 s fails.
    await untilStalled(
      'every event is published',
      async () => {
        const unpublished = await p.unpublished();
        return { done: unpublished === 0, progress: -unpublished, unpublished };
      },
      20_000,
    );
    const allPublished = Date.now() - began;
    await untilStalled(
      'every event is applied and acknowledged',
      async () => {
        const applied = (await p.applied()).length;
        const pending = await Promise.all(p.streams.map((stream) => p.pending(stream)));
        const unacknowledged = pending.reduce((sum, count) => sum + count, 0);
        const alive = consumers.filter((consumer) => consumer.child.exitCode === null && consumer.child.signalCode === null).length;
        return { done: applied >= AGGREGATES * PER_AGGREGATE && unacknowledged === 0, progress: applied - unacknowledged, applied, pending, alive };
      },
      20_000,
    );
    const allApplied = Date.now() - began;

    // Published at least once: every event reached a stream; duplicates are expected after kills.
    const entries = await p.entries();
    const published = new Set(entries.map((entry) => entry.eventId));
    expect(published.size).toBe(AGGREGATES * PER_AGGREGATE);
    expect(kills).toBeGreaterThanOrEqual(8);
    if (killedAfterPublish > 0) expect(entries.length).toBeGreaterThan(published.size);

    // Applied exactly once, and in aggregate_seq order per aggregate.
    const applied = await p.applied();
    expect(applied.length).toBe(AGGREGATES * PER_AGGREGATE);
    expect(new Set(applied.map((row) => row.event_id)).size).toBe(applied.length);
    const sequences = new Map<string, number[]>();
    for (const row of applied) sequences.set(row.aggregate_id, [...(sequences.get(row.aggregate_id) ?? []), row.aggregate_seq]);
    const expected = Array.from({ length: PER_AGGREGATE }, (_, i) => i + 1);
    for (const account of accounts) expect(sequences.get(account)).toEqual(expected);
    const total = expected.reduce((sum, seq) => sum + amountOf(seq), 0);
    for (const account of accounts.slice(0, 10)) expect(await p.balance(account)).toBe(total);
    console.log(
      `crowd: ${entries.length} stream entries for ${published.size} events (${entries.length - published.size} republished), ${kills} relay kills (${killedAfterPublish} right after a publish); written ${written} ms, published ${allPublished} ms, applied ${allApplied} ms`,
    );
  }, 180_000);
});
