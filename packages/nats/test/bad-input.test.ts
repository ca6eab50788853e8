import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, credit, relayOnce } from '@oncely/test-support';
import { natsPublisher } from '../src/index.js';
import { connectNats, NATS_URL, natsUp, suiteTitle, uniqueName } from './support/nats-server.js';
import { createPipeline, type Pipeline } from './support/pipeline.js';

describe.skipIf(!natsUp)(suiteTitle('bad input through a relay: the publisher fails the event, it stays in the PostgreSQL outbox'), () => {
  const pool = createPool();
  let nc: NatsConnection;
  let p: Pipeline;
  beforeAll(async () => {
    nc = await connectNats();
    p = await createPipeline(pool, nc, NATS_URL, 'badinput', 1);
  });
  afterAll(async () => {
    await p?.close();
    await nc?.close();
    await pool.end();
  });

  const runOnce = (subject: string) => relayOnce(p.outbox.source, natsPublisher({ connection: nc, subject, buckets: 1, timeoutMs: 1_000 }));

  it.each([
    ['an event over max_payload', async () => ({ ...credit(uniqueName('big')), payload: { blob: 'x'.repeat((nc.info?.max_payload ?? 1_048_576) + 10) } }), 'invalid_event'],
    ['a header value that is not a string (a row written behind the outbox)', async () => credit(uniqueName('hdr')), 'invalid_event'],
    ['a subject no stream stores', async () => credit(uniqueName('nostream')), undefined],
  ] as const)('%s: typed error, rescheduled, not marked published', async (label, make, code) => {
    const event = await p.enqueueOne(await make());
    if (label.startsWith('a header')) await pool.query(`UPDATE ${p.outbox.table} SET headers = '{"traceparent": 42}' WHERE event_id = $1`, [event]);
    const subject = label.startsWith('a subject') ? `${uniqueName('elsewhere')}.x` : p.subject;
    const { batch, failures } = await runOnce(subject);
    expect(batch).toMatchObject({ claimed: 1, published: 0, rescheduled: 1 });
    if (code) expect(failures[0]).toMatchObject({ code });
    else expect(failures[0]).toBeInstanceOf(Error);
    expect(await p.isPublished(event)).toBe(false);
    await pool.query(`DELETE FROM ${p.outbox.table} WHERE event_id = $1`, [event]);
  });
});
