/**
 * Transactional first requests on one driver, in a schema of their own (`pgtx_prof`), outside the suite:
 *   node --import tsx src/postgres/first-request-ab.ts ab <pg|postgres.js> [concurrency] [rounds] [ms]
 *     alternates the bare business transaction, the record floor, oncely default and lockClaim; prints median per-round ratios.
 *   node --cpu-prof --import tsx src/postgres/first-request-ab.ts loop <pg|postgres.js> <bare|floor|oncely|lock> [n]
 *     runs n first requests one after another, for a CPU profile of the client.
 * With ONCELY_POSTGRES_BASE=<path of another build's dist/index.js>, `ab` also alternates that build's
 * oncely and lockClaim (`oncely@base`, `lock@base`) in the same rounds, so a change is measured against its base in one run.
 */
import { createIdempotency } from '@oncely/core';
import { migrate, type PostgresDb, postgresStore } from '@oncely/postgres';
import pg from 'pg';
import postgres from 'postgres';
import { alternate, medianRatio } from '../harness/alternating.js';
import { firstRequestContender } from '../harness/workload-runs.js';
import { paymentAttempt } from '../subjects/oncely-subject.js';
import { paymentEffect } from '../subjects/payment-effect.js';
import { firstRequestsOnly, pgTransaction, postgresJsTransaction, type RunTransaction } from './business-transaction.js';
import type { Operations } from '../subjects/operations.js';

const SCHEMA = 'pgtx_prof';
const PAYMENTS = `${SCHEMA}.payments`;
const INSERT = `INSERT INTO ${PAYMENTS} (id, idempotency_key, amount, currency) VALUES ($1, $2, $3, $4)`;
const FLOOR = `WITH record AS (
    INSERT INTO ${SCHEMA}.oncely_idempotency (tenant, principal, operation, idempotency_key, fingerprint, state,
      response_status, response_body, fence, expires_at)
    VALUES ('bench', 'client', 'payments.create.v1', $2, '${'f'.repeat(64)}', 'succeeded', $5, $6::json, 1,
      statement_timestamp() + interval '1 day'))
  INSERT INTO ${PAYMENTS} (id, idempotency_key, amount, currency) VALUES ($1, $2, $3, $4)`;

const [mode = 'ab', driver = 'pg', ...rest] = process.argv.slice(2);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const pool = driver === 'pg' ? new pg.Pool({ connectionString: url, max: 16 }) : undefined;
// An idle client's error (a server restart) is reported, not thrown out of the process.
pool?.on('error', (error) => console.error('first-request-ab: idle pool client', error.message));
const sql = driver === 'pg' ? undefined : postgres(url, { max: 16, onnotice: () => undefined });
const db = (pool ?? sql) as PostgresDb;
const exec = (text: string) => (pool ? pool.query(text) : sql!.unsafe(text));
const run: RunTransaction = pool ? pgTransaction(pool) : postgresJsTransaction(sql!);

await exec(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
await migrate(db, { schema: SCHEMA });
await exec(`CREATE TABLE ${PAYMENTS} (id text PRIMARY KEY, idempotency_key text NOT NULL, amount integer NOT NULL,
  currency text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);

const effect = paymentEffect(false);
const params = (key: string, body: { id: string; amount: number; currency: string }) => [body.id, key, body.amount, body.currency];
const base = process.env.ONCELY_POSTGRES_BASE ? ((await import(process.env.ONCELY_POSTGRES_BASE)) as { postgresStore: typeof postgresStore }) : undefined;
const oncely = (name: string, lockClaim: boolean, store = postgresStore): Operations => {
  const engine = createIdempotency({ store: store({ db, schema: SCHEMA, lockClaim }) });
  return firstRequestsOnly(name, 'first only', async (key) => {
    const result = await engine.runInTransaction(paymentAttempt(key), async ({ tx }) => {
      const response = await effect.forKey(key)();
      await tx.query(INSERT, params(key, response.body));
      return response;
    });
    if (result.kind !== 'executed') throw new Error(`${name}: ${key} answered ${result.kind}`);
  });
};
const contenders: Record<string, Operations> = {
  bare: firstRequestsOnly('bare', 'first only', (key) =>
    run(async (query) => {
      await query(INSERT, params(key, (await effect.forKey(key)()).body));
    }),
  ),
  floor: firstRequestsOnly('floor', 'first only', (key) =>
    run(async (query) => {
      const response = await effect.forKey(key)();
      await query(FLOOR, [...params(key, response.body), response.status, JSON.stringify(response.body)]);
    }),
  ),
  oncely: oncely('oncely', false),
  lock: oncely('lock', true),
  ...(base && { 'oncely@base': oncely('oncely@base', false, base.postgresStore), 'lock@base': oncely('lock@base', true, base.postgresStore) }),
};

const stamp = Date.now().toString(36);
if (mode === 'loop') {
  const [name = 'oncely', n = '20000'] = rest;
  const ops = contenders[name]!;
  for (let i = 0; i < 2000; i++) await ops.first(`${stamp}-w${i}`);
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < Number(n); i++) await ops.first(`${stamp}-${i}`);
  const { user, system } = process.cpuUsage(cpu);
  const elapsed = performance.now() - started;
  console.log(`${driver} ${name}: ${((Number(n) * 1000) / elapsed).toFixed(0)} ops/s, client CPU ${((user + system) / Number(n)).toFixed(1)} µs/op`);
} else {
  const [concurrency = '1', rounds = '7', ms = '1500'] = rest;
  const timing = { concurrency: Number(concurrency), durationMs: Number(ms) };
  const list = Object.values(contenders);
  const result = await alternate(
    list.map((ops, i) => firstRequestContender(ops, timing, `${stamp}-${i}`)),
    Number(rounds),
  );
  const bare = result.byName.get('bare')!.medianOpsPerSec;
  const ratios = list.slice(1).map((ops) => `${ops.name} ${medianRatio(result, ops.name, 'bare').toFixed(2)}`);
  console.log(`${driver} c=${concurrency}: bare ${bare.toFixed(0)} ops/s; ÷ bare: ${ratios.join(', ')}`);
}
await exec(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
await (pool ? pool.end() : sql!.end());
