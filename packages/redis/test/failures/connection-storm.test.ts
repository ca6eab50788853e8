import { createIdempotency, isOncelyError } from '@oncely/core';
import type { OutboxEvent } from '@oncely/core/outbox';
import { Redis } from 'ioredis';
import { IOREDIS_UNHEARD, unheardErrors } from '@oncely/test-support';
import { afterAll, expect, it } from 'vitest';
import { redisJournal, redisStore, redisStreamConsumer, redisStreamPublisher } from '../../src/index.js';
import { type PrivateServer, startPrivateServer } from '../servers/private-server.js';

/**
 * Every connection this package uses, on a private redis-server: the store's and the journal's
 * client (the caller's, with its own error listener, as a service has) and the Streams consumer's own
 * duplicate connection. `CLIENT KILL ID` on them every 30 ms. No error goes unheard (an unheard ioredis `'error'` is logged as
 * "Unhandled error event"), every failure is a typed OncelyError, and every published event is
 * handled (a killed XREADGROUP fails and the consumer re-reads its pending entries, in order).
 */

const NAME = 'oncely-storm';
let server: PrivateServer | undefined;
const clients: Redis[] = [];
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await server?.dispose();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('CLIENT KILL every 30 ms on every connection: no unheard error, failures are typed, every event handled', async () => {
  server = await startPrivateServer();
  const connect = (connectionName: string, listen: boolean) => {
    const client = new Redis(server!.url, { connectionName, maxRetriesPerRequest: 2 });
    if (listen) client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  const client = connect(NAME, true);
  const admin = connect('admin', true);
  const unheard = unheardErrors({ logged: IOREDIS_UNHEARD });

  const engine = createIdempotency({ store: redisStore({ client }) });
  const journal = redisJournal({ client });
  const stream = 'storm-events';
  const handled = new Set<string>();
  const consumer = redisStreamConsumer({
    client,
    stream,
    group: 'g',
    consumer: 'c1',
    blockMs: 100,
    backoff: { baseMs: 20, capMs: 200 },
    async handle(event) {
      handled.add(event.eventId);
      return 'processed';
    },
  });
  const publisher = redisStreamPublisher({ client: connect('writer', true), stream });
  let killed = 0;
  let stop = false;
  const failures: unknown[] = [];
  const published: string[] = [];
  try {
    await consumer.start();
    const storm = (async () => {
      while (!stop) {
        const list = String(await admin.client('LIST').catch(() => ''));
        for (const line of list.split('\n')) {
          const id = / name=oncely-storm /.test(line) ? /^id=(\d+)/.exec(line)?.[1] : undefined;
          if (id) killed += Number(await admin.client('KILL', 'ID', id).catch(() => 0));
        }
        await sleep(30);
      }
    })();
    const work = (async () => {
      for (let n = 0; !stop; n++) {
        const key = `k-${n}`;
        const event: OutboxEvent = { eventId: `e-${n}`, aggregateType: 'a', aggregateId: `a-${n}`, aggregateSeq: 1, eventType: 't', payload: {}, createdAt: new Date() };
        const outcomes = await Promise.allSettled([
          engine.run({ tenant: 't', operation: 'op', key, request: { key } }, async () => ({ status: 200, body: {} })),
          journal.begin(`op-${key}`),
          publisher.publish([event], new AbortController().signal),
        ]);
        const sent = outcomes[2];
        if (sent.status === 'fulfilled' && sent.value[0]?.kind === 'published') published.push(event.eventId);
        for (const outcome of outcomes.slice(0, 2)) if (outcome.status === 'rejected') failures.push(outcome.reason);
        await sleep(5);
      }
    })();
    await sleep(3_000);
    stop = true;
    await Promise.all([storm, work]);
    for (let waited = 0; waited < 10_000 && published.some((id) => !handled.has(id)); waited += 100) await sleep(100);
  } finally {
    stop = true;
    await consumer.stop();
    unheard.stop();
  }
  expect(unheard.errors, 'unheard errors').toEqual([]);
  expect(killed, 'connections killed').toBeGreaterThan(10);
  expect(failures.filter((failure) => !isOncelyError(failure)).map((failure) => String(failure)), 'every failure is a typed OncelyError').toEqual([]);
  expect(published.length).toBeGreaterThan(5);
  expect(published.filter((id) => !handled.has(id)), 'every published event handled').toEqual([]);
}, 30_000);
