import { createRelay, type NewOutboxEvent } from '@oncely/core/outbox';
import { migrate, postgresInbox, postgresOutbox, type PostgresTx, sqlDriver } from '@oncely/postgres';
import { redisStreamConsumer, redisStreamPublisher } from '@oncely/redis';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { DATABASE_URL } from '../support/databases.js';
import { crashCounter, killRedisClients, runName, stormResources, terminateBackends } from '../support/storms.js';

/**
 * The outbox relay (PostgreSQL outbox with LISTEN wake-ups → Redis Streams) and the stream consumer
 * (→ PostgreSQL inbox, one transaction with the business write) in this process, while every
 * connection they own is killed every 30 ms: their PostgreSQL backends by application_name, their
 * Redis clients by name. The writer's connection is left alone. In the end every event is applied
 * exactly once, in aggregate order, and nothing crashed: an entry acknowledged before its inbox
 * transaction committed would be missing.
 */

const SHARED_REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const REDIS_PORT = Number(SHARED_REDIS.port || 6379);
const AGGREGATES = 20;
const PER_AGGREGATE = 20;

const resources = stormResources();
afterAll(() => resources.dispose());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function namedRedis(connectionName: string): Redis {
  const client = new Redis({ host: '127.0.0.1', port: REDIS_PORT, connectionName });
  client.on('error', () => undefined);
  resources.defer(async () => client.disconnect());
  return client;
}

it('relay, consumer and inbox under pg_terminate_backend and CLIENT KILL every 30 ms: every event applied once, in order, no crash', async () => {
  const name = runName('storm_pipeline');
  const relayName = `${name}_relay`;
  const consumerName = `${name}_consumer`;
  const writer = resources.pool(DATABASE_URL, `${name}_writer`);
  await migrate(writer, { schema: name });
  await writer.query(`CREATE TABLE "${name}".applied (id bigserial PRIMARY KEY, event_id text NOT NULL, aggregate_id text NOT NULL, aggregate_seq int NOT NULL)`);
  resources.defer(() => writer.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`));
  const stream = `oncely-test:${name}`;
  const admin = namedRedis(`${name}_admin`);
  resources.defer(() => admin.unlink(stream));

  const relayPool = resources.pool(DATABASE_URL, relayName);
  const relay = createRelay({
    source: postgresOutbox({ db: relayPool, schema: name, channel: name }).source,
    publisher: redisStreamPublisher({ client: namedRedis(relayName), stream }),
    id: relayName,
    batchSize: 50,
    leaseMs: 1_000,
    pollIntervalMs: 100,
    statsIntervalMs: 0,
    purge: false,
  });
  const consumerPool = resources.pool(DATABASE_URL, consumerName);
  const inbox = postgresInbox({ db: consumerPool, schema: name });
  const consumer = redisStreamConsumer({
    client: namedRedis(consumerName),
    stream,
    group: 'billing',
    consumer: consumerName,
    blockMs: 100,
    backoff: { baseMs: 20, capMs: 200 },
    async handle(event) {
      return inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx: PostgresTx) =>
        tx.query(`INSERT INTO "${name}".applied (event_id, aggregate_id, aggregate_seq) VALUES ($1, $2, $3)`, [
          event.eventId,
          event.aggregateId,
          event.aggregateSeq,
        ]),
      );
    },
  });

  const crashes = crashCounter();
  const storms = [
    await terminateBackends(DATABASE_URL, relayName, 30),
    await terminateBackends(DATABASE_URL, consumerName, 30),
    killRedisClients(REDIS_PORT, relayName, 30),
    killRedisClients(REDIS_PORT, consumerName, 30),
  ];
  try {
    relay.start();
    await consumer.start();
    // The writer enqueues one event per aggregate per transaction while the storm runs.
    const outbox = postgresOutbox({ db: writer, schema: name, channel: name });
    const writes = sqlDriver(writer);
    for (let seq = 1; seq <= PER_AGGREGATE; seq++) {
      await writes.transaction(async (tx) => {
        for (let aggregate = 0; aggregate < AGGREGATES; aggregate++) {
          const event: NewOutboxEvent = { aggregateType: 'account', aggregateId: `acct-${aggregate}`, eventType: 'credited', payload: { seq } };
          await outbox.enqueue(tx, event);
        }
        return { action: 'commit', value: undefined };
      });
      await sleep(150);
    }
    await sleep(500);
  } finally {
    for (const storm of storms) await storm.stop();
  }
  const killed = storms.map((storm) => storm.count());

  // After the storm: everything drains.
  const deadline = Date.now() + 20_000;
  const count = async () => Number((await writer.query(`SELECT count(*)::int AS n FROM "${name}".applied`)).rows[0].n);
  const unpublished = async () =>
    Number((await writer.query(`SELECT count(*)::int AS n FROM "${name}".oncely_outbox WHERE published_at IS NULL`)).rows[0].n);
  const pending = async () => Number(((await admin.xpending(stream, 'billing')) as [number])[0]);
  while (Date.now() < deadline && ((await count()) < AGGREGATES * PER_AGGREGATE || (await unpublished()) > 0 || (await pending()) > 0)) {
    await sleep(200);
  }
  await consumer.stop();
  await relay.stop();
  crashes.stop();

  const applied = (await writer.query(`SELECT event_id, aggregate_id, aggregate_seq FROM "${name}".applied ORDER BY id`)).rows as {
    event_id: string;
    aggregate_id: string;
    aggregate_seq: number;
  }[];
  console.info(
    `storm ${JSON.stringify({ name: 'pipeline', events: AGGREGATES * PER_AGGREGATE, applied: applied.length, killed: { relayBackends: killed[0], consumerBackends: killed[1], relayClients: killed[2], consumerClients: killed[3] }, crashes: crashes.errors.length })}`,
  );
  expect(crashes.errors, 'uncaught errors').toEqual([]);
  expect(killed[0]! + killed[1]!, 'backends killed').toBeGreaterThan(20);
  expect(killed[2]! + killed[3]!, 'Redis clients killed').toBeGreaterThan(20);
  expect(await unpublished(), 'the relay drained the outbox').toBe(0);
  expect(await pending(), 'every entry acknowledged').toBe(0);
  expect(applied).toHaveLength(AGGREGATES * PER_AGGREGATE);
  expect(new Set(applied.map((row) => row.event_id)).size, 'each event applied once').toBe(applied.length);
  const order = new Map<string, number[]>();
  for (const row of applied) order.set(row.aggregate_id, [...(order.get(row.aggregate_id) ?? []), row.aggregate_seq]);
  const expected = Array.from({ length: PER_AGGREGATE }, (_, index) => index + 1);
  for (let aggregate = 0; aggregate < AGGREGATES; aggregate++) expect(order.get(`acct-${aggregate}`)).toEqual(expected);
}, 30_000);
