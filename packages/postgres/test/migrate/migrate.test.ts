import { createIdempotency, isOncelyError } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, migrations, postgresStore } from '../../src/index.js';
import { storeStatements } from '../../src/sql/statements.js';
import { qualifiedName } from '../../src/identifiers/identifier.js';
import { countingPool } from '../support/counting-pool.js';
import { createPool, dropSchema, uniqueSchema } from '../support/database.js';

const pool = createPool({ max: 10 });
const schemas: string[] = [];
const freshSchema = (label: string) => {
  const schema = uniqueSchema(label);
  schemas.push(schema);
  return schema;
};

afterAll(async () => {
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

const columns = async (schema: string, table: string) =>
  (
    await pool.query(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [schema, table],
    )
  ).rows;

/** Indexes of the idempotency tables only: the outbox, inbox and journal files create their own. */
const indexes = async (schema: string, tables = ['oncely_idempotency']) =>
  (
    await pool.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = ANY($2) ORDER BY indexname`,
      [schema, tables],
    )
  ).rows;

describe('migrate', () => {
  it('creates the scope key, the documented columns, the state check and the expiry index', async () => {
    const schema = freshSchema('schema');
    const applied = await migrate(pool, { schema });
    expect(applied[0]).toBe('0001_idempotency.sql');
    expect(applied).toEqual([...applied].sort());
    expect(await columns(schema, 'oncely_idempotency')).toEqual([
      { column_name: 'tenant', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'principal', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'operation', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'idempotency_key', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'fingerprint', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'state', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'lease_token', data_type: 'text', is_nullable: 'YES' },
      { column_name: 'lease_expires_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
      { column_name: 'fence', data_type: 'integer', is_nullable: 'NO' },
      { column_name: 'response_status', data_type: 'smallint', is_nullable: 'YES' },
      { column_name: 'response_headers', data_type: 'json', is_nullable: 'YES' },
      { column_name: 'response_body', data_type: 'json', is_nullable: 'YES' },
      { column_name: 'body_omitted', data_type: 'boolean', is_nullable: 'NO' },
      { column_name: 'resource_id', data_type: 'text', is_nullable: 'YES' },
      { column_name: 'created_at', data_type: 'timestamp with time zone', is_nullable: 'NO' },
      { column_name: 'expires_at', data_type: 'timestamp with time zone', is_nullable: 'NO' },
    ]);
    expect((await indexes(schema)).map((index) => index.indexdef.replace(`${schema}.`, ''))).toEqual([
      'CREATE INDEX oncely_idempotency_expires_at_idx ON oncely_idempotency USING btree (expires_at)',
      'CREATE UNIQUE INDEX oncely_idempotency_pkey ON oncely_idempotency USING btree (tenant, principal, operation, idempotency_key)',
    ]);
    const bogus = await pool
      .query(
        `INSERT INTO "${schema}".oncely_idempotency (tenant, principal, operation, idempotency_key, fingerprint, state, expires_at)
         VALUES ('t', '', 'op', 'k', 'f', 'done', now())`,
      )
      .catch((error: { code?: string }) => error.code);
    expect(bogus).toBe('23514');
  });

  it('eight instances migrating at once take turns: every call succeeds, and running again changes nothing', async () => {
    const schema = freshSchema('concurrent');
    const tables = async () =>
      (await pool.query(`SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`, [schema])).rows;
    const results = await Promise.all(Array.from({ length: 8 }, () => migrate(pool, { schema })));
    expect(new Set(results.map((names) => names.join())).size).toBe(1);
    const created = await tables();
    expect(created).toContainEqual({ tablename: 'oncely_idempotency' });
    await migrate(pool, { schema });
    expect(await tables()).toEqual(created);
    expect(await indexes(schema)).toHaveLength(2);
  });

  it('renamed tables take their indexes with them, so two stores share a schema without sharing records', async () => {
    const schema = freshSchema('renamed');
    await migrate(pool, { schema, tables: { oncely_idempotency: 'payment_keys' } });
    await migrate(pool, { schema, tables: { oncely_idempotency: 'refund_keys' } });
    expect((await indexes(schema, ['payment_keys', 'refund_keys'])).map((index) => index.indexname)).toEqual([
      'payment_keys_expires_at_idx',
      'payment_keys_pkey',
      'refund_keys_expires_at_idx',
      'refund_keys_pkey',
    ]);
    const payments = createIdempotency({ store: postgresStore({ db: pool, schema, table: 'payment_keys' }) });
    const refunds = createIdempotency({ store: postgresStore({ db: pool, schema, table: 'refund_keys' }) });
    const request = { tenant: 'acme', operation: 'money.move.v1', key: uniqueKey('shared'), request: {} };
    expect((await payments.run(request, async () => ({ status: 201 }))).kind).toBe('executed');
    expect((await refunds.run(request, async () => ({ status: 201 }))).kind).toBe('executed');
  });

  it('bad names and unknown tables are refused before a single statement reaches the server', async () => {
    const counted = countingPool(pool);
    const attempts = [
      migrate(counted, { schema: 'bad-name' }),
      migrate(counted, { schema: 'x"; DROP SCHEMA public; --' }),
      migrate(counted, { tables: { oncely_idempotency: 'keys; DROP TABLE accounts' } }),
      migrate(counted, { tables: { oncely_outbox_typo: 'events' } }),
    ];
    for (const attempt of attempts) {
      expect(isOncelyError(await attempt.catch((error: unknown) => error), 'invalid_option')).toBe(true);
    }
    expect(counted.sent).toEqual([]);
    expect(() => postgresStore({ db: pool, table: 'a.b' })).toThrow(/plain identifier/);
  });

  it('migrations() renders the exact SQL migrate runs, for copying into another migration tool', () => {
    const [file] = migrations({ tables: { oncely_idempotency: 'payment_keys' } });
    expect(file?.name).toBe('0001_idempotency.sql');
    expect(file?.sql).toContain('CREATE TABLE IF NOT EXISTS "payment_keys" (');
    expect(file?.sql).toContain('CREATE INDEX IF NOT EXISTS "payment_keys_expires_at_idx" ON "payment_keys" (expires_at);');
    expect(file?.sql).not.toMatch(/oncely_idempotency/);
    expect(migrations()[0]?.sql).toContain('CREATE TABLE IF NOT EXISTS oncely_idempotency (');
  });

  it('purgeExpired deletes through the expiry index, oldest first, in a batch of the given size', async () => {
    const schema = freshSchema('purge');
    await migrate(pool, { schema });
    const table = `"${schema}".oncely_idempotency`;
    await pool.query(
      `INSERT INTO ${table} (tenant, principal, operation, idempotency_key, fingerprint, state, response_status, expires_at)
       SELECT 't', '', 'op', 'k' || i, 'f', 'succeeded', 200, now() + (i - 50) * interval '1 hour'
       FROM generate_series(1, 5000) AS i`,
    );
    await pool.query(`ANALYZE ${table}`);
    const purge = storeStatements(qualifiedName(schema, 'oncely_idempotency')).purge;
    const plan = JSON.stringify((await pool.query(`EXPLAIN (FORMAT JSON) ${purge}`, [10])).rows[0]);
    expect(plan).toContain('"Index Name":"oncely_idempotency_expires_at_idx"');
    const store = postgresStore({ db: pool, schema });
    expect(await store.purgeExpired(10)).toBe(10);
    const { rows } = await pool.query(`SELECT min(substr(idempotency_key, 2)::int) AS oldest, count(*)::int AS left FROM ${table}`);
    expect(rows[0]).toEqual({ oldest: 11, left: 4990 });
    expect(await store.purgeExpired(1_000)).toBe(40);
  });
});
