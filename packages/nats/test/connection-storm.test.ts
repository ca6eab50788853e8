import type { NatsConnection } from '@nats-io/nats-core';
import { postgresInbox, postgresOutbox } from '@oncely/postgres';
import { connectionStorm, createPool, DATABASE_URL, socketProxy, terminateBackends } from '@oncely/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsBucketSubjects, natsConsumer, natsPublisher } from '../src/index.js';
import { connectNats, privateNatsServer, uniqueName } from './support/nats-server.js';
import { createPipeline, type Pipeline } from './support/pipeline.js';

/**
 * Every connection this package's publisher and consumers hold, killed for a few seconds: their
 * NATS connections run through a TCP proxy that resets every socket every 50 ms (NATS 2.9 has no
 * server-side kick), in front of a private nats-server, and their PostgreSQL backends are
 * terminated (`pg_terminate_backend` of only this run's application_name). Nothing reaches
 * `uncaughtException` or `unhandledRejection`, and every event is applied once, in order, by the
 * end: the relay and the consumers keep draining through it.
 */

const BUCKETS = 8;

describe('connection storm: NATS sockets reset under the client and PostgreSQL backends terminated, in process', () => {
  const admin = createPool();
  const name = uniqueName('connstorm');
  const pool = new pg.Pool({ connectionString: DATABASE_URL, application_name: name, max: 8 });
  pool.on('error', () => undefined);
  let server: Awaited<ReturnType<typeof privateNatsServer>>;
  let proxy: Awaited<ReturnType<typeof socketProxy>>;
  let direct: NatsConnection;
  let p: Pipeline;
  beforeAll(async () => {
    server = await privateNatsServer();
    proxy = await socketProxy(0, { host: '127.0.0.1', port: server.port });
    direct = await connectNats(server.url);
    p = await createPipeline(admin, direct, server.url, 'connstorm', BUCKETS);
  });
  afterAll(async () => {
    await p?.close();
    await direct?.close();
    await proxy?.close();
    await server?.stop();
    await Promise.all([pool.end(), admin.end()]);
  });

  it('no error goes unheard, every event is applied exactly once in aggregate order, and the pipeline drains after the storm', async () => {
    const storm = await connectionStorm({
      name,
      pipeline: p,
      durationMs: 6_000,
      drainMs: 15_000,
      aggregates: 40,
      enqueueEveryMs: 100,
      killers: {
        'NATS sockets': { everyMs: 50, kill: async () => proxy.cut() },
        'PostgreSQL backends': { everyMs: 150, kill: terminateBackends(admin, name) },
      },
      source: postgresOutbox({ db: pool, schema: p.schema }).source,
      inbox: postgresInbox({ db: pool, schema: p.schema }),
      async open(handle) {
        const [relayConnection, consumerConnection] = await Promise.all([connectNats(proxy.url('nats')), connectNats(proxy.url('nats'))]);
        return {
          publisher: natsPublisher({ connection: relayConnection, subject: p.subject, buckets: BUCKETS, stream: p.stream, timeoutMs: 500 }),
          consumers: natsBucketSubjects(p.subject, BUCKETS).map((subject, bucket) =>
            natsConsumer({
              connection: consumerConnection,
              stream: p.stream,
              durable: `billing-${bucket}`,
              filterSubject: subject,
              deadLetterSubject: `${p.subject}-dead`,
              ackWaitMs: 1_000,
              maxDeliver: 1_000,
              backoff: { baseMs: 20, capMs: 200 },
              handle,
            }),
          ),
          close: () => Promise.all([relayConnection.close(), consumerConnection.close()]).then(() => undefined),
        };
      },
    });
    console.info(`nats connection storm: ${storm.summary}`);
    expect(storm.problems).toEqual([]);
    expect(storm.kills['NATS sockets'], 'NATS sockets reset').toBeGreaterThan(10);
    expect(storm.kills['PostgreSQL backends'], 'PostgreSQL backends terminated').toBeGreaterThan(5);
  }, 30_000);
});
