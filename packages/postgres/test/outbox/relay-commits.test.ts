import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresInbox, postgresOutbox, sqlDriver } from '../../src/index.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';
import { enqueueCommitted, freshOutboxTable } from './outbox-support.js';

// Every connection starts with synchronous_commit on, whatever the server's default, so 'off' can only
// come from oncely's statements.
const SESSION = '-c synchronous_commit=on';
const pool = createPool({ options: SESSION });
const schema = uniqueSchema('relay_commits');
const credit = (aggregateId: string) => ({ aggregateType: 'account', aggregateId, eventType: 'account.credited.v1', payload: { amount: 1 } });
const commitSetting = async (db: { query(text: string): Promise<{ rows: { value: string }[] }> }) =>
  (await db.query(`SELECT current_setting('synchronous_commit') AS value`)).rows[0]?.value;

let client: pg.Client;

beforeAll(async () => {
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await migrate(pool, { schema });
  client = new pg.Client({ connectionString: DATABASE_URL, options: SESSION });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await dropSchema(pool, schema);
  await pool.end();
});

/** Runs `statement` inside a transaction of our own and answers the setting its COMMIT would use. */
async function settingAfter(statement: () => Promise<unknown>): Promise<string | undefined> {
  await client.query('BEGIN');
  try {
    await statement();
    return await commitSetting(client);
  } finally {
    await client.query('COMMIT');
  }
}

describe('the relay’s bookkeeping commits without waiting for the WAL flush; enqueue and the inbox do not', () => {
  it('claim, mark published, reschedule, dead letter and release set synchronous_commit off for their own transaction only', async () => {
    const table = await freshOutboxTable(pool, schema);
    const writer = postgresOutbox({ db: pool, schema, table });
    const source = postgresOutbox({ db: client, schema, table }).source;
    const events = [];
    for (const account of ['a', 'b', 'c', 'd']) events.push(await enqueueCommitted(pool, writer, credit(account)));
    const [marked, rescheduled, lettered, released] = events.map((event) => event!.eventId) as [string, string, string, string];

    let claimed = 0;
    expect(await settingAfter(async () => (claimed = (await source.claim({ owner: 'r1', limit: 10, leaseMs: 60_000 })).length))).toBe('off');
    expect(claimed).toBe(4);
    expect(await commitSetting(client)).toBe('on');
    expect(await settingAfter(() => source.markPublished([marked]))).toBe('off');
    let changed = 0;
    const count = (n: number) => {
      changed += n;
    };
    expect(await settingAfter(async () => count(await source.reschedule({ owner: 'r1', retries: [{ eventId: rescheduled, delayMs: 60_000, error: 'x' }] })))).toBe('off');
    expect(await settingAfter(async () => count(await source.deadLetter({ owner: 'r1', letters: [{ eventId: lettered, error: 'x' }] })))).toBe('off');
    expect(await settingAfter(async () => count(await source.release({ owner: 'r1', eventIds: [released] })))).toBe('off');
    expect(changed).toBe(3);
    // SET LOCAL: the pooled connection goes back to the session's setting.
    expect(await commitSetting(client)).toBe('on');
    const { rows } = await pool.query<{ published: number }>(`SELECT count(*)::int AS published FROM "${schema}"."${table}" WHERE published_at IS NOT NULL`);
    expect(rows[0]?.published).toBe(1);
  });

  it('enqueue in the caller’s transaction, requeue and both inbox paths keep the session’s setting', async () => {
    const table = await freshOutboxTable(pool, schema);
    const outbox = postgresOutbox({ db: pool, schema, table });
    const inbox = postgresInbox({ db: pool, schema });
    const seen: (string | undefined)[] = [];
    await sqlDriver(pool).transaction(async (tx) => {
      await outbox.enqueue(tx, credit('a'));
      seen.push(await commitSetting(tx));
      return { action: 'commit', value: undefined };
    });
    expect(await inbox.run({ consumer: 'billing', eventId: 'evt-1' }, async (tx) => seen.push(await commitSetting(tx)))).toBe('processed');
    const batch = await inbox.runBatch('billing', [{ eventId: 'evt-2', fn: async (tx) => seen.push(await commitSetting(tx)) }]);
    expect(batch.outcomes).toEqual(['processed']);
    const source = postgresOutbox({ db: client, schema, table }).source;
    const [event] = await source.claim({ owner: 'r1', limit: 1, leaseMs: 60_000 });
    await source.deadLetter({ owner: 'r1', letters: [{ eventId: event!.eventId, error: 'x' }] });
    const requeue = postgresOutbox({ db: client, schema, table });
    seen.push(await settingAfter(async () => expect(await requeue.requeue([event!.eventId])).toBe(1)));
    expect(seen).toEqual(['on', 'on', 'on', 'on']);
  });
});
