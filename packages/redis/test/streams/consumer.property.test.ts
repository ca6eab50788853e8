import type { OutboxEvent } from '@oncely/core/outbox';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { partitionOf, redisStreamConsumer, redisStreamPublisher } from '../../src/index.js';
import { cleanUp, connect, eventOf, ledger, pendingCount, streamPrefix, until } from './stream-fixtures.js';

const client = connect();
const prefix = streamPrefix();
let run = 0;

afterAll(async () => {
  await cleanUp(client, prefix);
  await client.quit();
});

describe('redisStreamConsumer properties (real Redis)', () => {
  it('whatever the handler failures and restarts, every event is applied once and each aggregate in sequence order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(5), { minLength: 1, maxLength: 40 }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        fc.array(fc.nat(40), { maxLength: 3 }),
        fc.boolean(),
        async (aggregates, fails, restartsAfter, republish) => {
          run += 1;
          const streamOf = (event: OutboxEvent) => `${prefix}r${run}:p${partitionOf(event.aggregateId, 2)}`;
          const streams = [0, 1].map((p) => `${prefix}r${run}:p${p}`);
          const seqs = new Map<number, number>();
          const events = aggregates.map((aggregate) => {
            const seq = (seqs.get(aggregate) ?? 0) + 1;
            seqs.set(aggregate, seq);
            return eventOf(`acct-${aggregate}`, seq);
          });
          const publisher = redisStreamPublisher({ client, stream: streamOf });
          await publisher.publish(events, new AbortController().signal);
          // A relay crash between XADD and mark publishes the same events again.
          if (republish) await publisher.publish(events, new AbortController().signal);

          let call = 0;
          const { applied, handle } = ledger(() => fails[call++] === true);
          const start = async () => {
            const consumer = redisStreamConsumer({
              client,
              stream: streams,
              group: 'billing',
              consumer: 'worker',
              handle,
              batchSize: 7,
              blockMs: 50,
              backoff: { baseMs: 1, capMs: 5 },
            });
            await consumer.start();
            return consumer;
          };
          let consumer = await start();
          for (const after of [...restartsAfter].sort((a, b) => a - b)) {
            await until(() => applied.length >= Math.min(after, events.length));
            await consumer.stop();
            consumer = await start();
          }
          await until(() => applied.length === events.length);
          await until(async () => (await pendingCount(client, streams[0]!, 'billing')) + (await pendingCount(client, streams[1]!, 'billing')) === 0);
          await consumer.stop();

          expect(new Set(applied.map((event) => event.eventId)).size).toBe(events.length);
          const perAggregate = new Map<string, number[]>();
          for (const event of applied) perAggregate.set(event.aggregateId, [...(perAggregate.get(event.aggregateId) ?? []), event.aggregateSeq]);
          for (const sequence of perAggregate.values()) expect(sequence).toEqual(sequence.map((_, index) => index + 1));
        },
      ),
      { numRuns: 20 },
    );
  }, 120_000);
});
