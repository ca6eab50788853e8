import { migrate } from '@oncely/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preciseNow } from '../src/harness/precise-clock.js';
import { startProducerChild } from '../src/outbox/producer-child.js';
import type { ProducerStamp } from '../src/outbox/producer-process.js';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_producer_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  await migrate(pool, { schema });
});

afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool?.end();
});

describe('the producer process of the end-to-end run', () => {
  it('enqueues every event once in its own transactions and stamps each after its commit', async () => {
    const child = await startProducerChild();
    const stamps: ProducerStamp[] = [];
    try {
      await child.run({ databaseUrl, schema, events: 40, aggregates: 3, producers: 4, ratePerSec: 2_000, startedAt: preciseNow() }, (s) => stamps.push(s));
    } finally {
      child.kill();
    }
    const { rows } = await pool.query<{ event_id: string; aggregate_id: string; aggregate_seq: string }>(
      `SELECT event_id, aggregate_id, aggregate_seq FROM "${schema}".oncely_outbox ORDER BY position`,
    );
    expect(rows).toHaveLength(40);
    expect(new Set(stamps.map(([id]) => id))).toEqual(new Set(rows.map((r) => r.event_id)));
    for (const [, created, enqueued, committed] of stamps) expect(created <= enqueued + 1 && enqueued <= committed).toBe(true);
    // Each aggregate's sequence has no gap: 40 events over 3 aggregates.
    const seqs = new Map<string, number[]>();
    for (const r of rows) seqs.set(r.aggregate_id, [...(seqs.get(r.aggregate_id) ?? []), Number(r.aggregate_seq)]);
    expect(seqs.size).toBe(3);
    for (const [, seq] of seqs) expect(seq.sort((a, b) => a - b)).toEqual(seq.map((_, i) => i + 1));
  });

  it('rejects the run when the producers fail, naming the cause', async () => {
    const child = await startProducerChild();
    try {
      await expect(
        child.run({ databaseUrl, schema: `${schema}_missing`, events: 1, aggregates: 1, producers: 1, startedAt: preciseNow() }, () => undefined),
      ).rejects.toThrow(/producer process failed/);
    } finally {
      child.kill();
    }
  });
});
