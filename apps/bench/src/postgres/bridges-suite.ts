import { createIdempotency } from '@oncely/core';
import { migrate, postgresStore, type TransactionBridge } from '@oncely/postgres';
import { drizzleBridge } from '@oncely/postgres/drizzle';
import { knexBridge } from '@oncely/postgres/knex';
import { kyselyBridge } from '@oncely/postgres/kysely';
import { mikroOrmBridge } from '@oncely/postgres/mikro-orm';
import { typeormBridge } from '@oncely/postgres/typeorm';
import { IsolationLevel, type EntityManager as MikroEntityManager, MikroORM } from '@mikro-orm/postgresql';
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import knex from 'knex';
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { DataSource, type EntityManager as TypeormManager } from 'typeorm';
import type { BenchOptions } from '../cli/options.js';
import { markdownTable } from '../harness/markdown.js';
import type { Report } from '../harness/report.js';
import { startPgRoundTripProxy } from '../servers/pg-round-trip-proxy.js';
import { ensureBenchDatabase } from './bench-database.js';
import type { TrafficCounter } from './count-round-trips.js';

const SCHEMA = 'bench_bridges';
const PAYMENTS = `${SCHEMA}.payments`;
const INSERT = `INSERT INTO ${PAYMENTS} (idempotency_key, amount) VALUES ($1, $2)`;

/** One ORM on the counting proxy: its transaction, and the same one business insert through it. */
interface Subject<Db, Tx> {
  readonly name: string;
  readonly db: Db;
  readonly bridge?: TransactionBridge<Db, Tx>;
  /** The ORM's own transaction around the business insert: what the application runs without oncely. */
  transaction(work: (tx: Tx) => Promise<void>): Promise<void>;
  insert(tx: Tx, key: string): Promise<void>;
  close(): Promise<void>;
}

const request = (key: string) => ({ tenant: 'bench', operation: 'payments.create.v1', key, request: { amount: 1 } });

/** Round trips per operation of `work`, over `count` sequential runs. */
async function perOperation(counter: TrafficCounter, count: number, work: (i: number) => Promise<void>): Promise<number> {
  const before = counter().roundTrips;
  for (let i = 0; i < count; i++) await work(i);
  return (counter().roundTrips - before) / count;
}

/** Counts one subject: the bare ORM transaction, oncely through the bridge (first, replay), and the join. */
async function countSubject<Db, Tx>(subject: Subject<Db, Tx>, counter: TrafficCounter, count: number, prefix: string) {
  // Warm: connections open, statements prepared, so only steady-state round trips are counted.
  const warm = async (label: string, run: (key: string) => Promise<unknown>) => {
    for (let i = 0; i < 3; i++) await run(`${prefix}-${label}-warm-${i}`);
  };
  const bare = (key: string) => subject.transaction((tx) => subject.insert(tx, key));
  await warm('bare', bare);
  const baseline = await perOperation(counter, count, (i) => bare(`${prefix}-bare-${i}`));

  const store = subject.bridge
    ? postgresStore({ db: subject.db, bridge: subject.bridge, schema: SCHEMA })
    : postgresStore({ db: subject.db as pg.Pool, schema: SCHEMA });
  const idempotency = createIdempotency({ store: store as ReturnType<typeof postgresStore<Db, Tx>> });
  const first = (key: string) => idempotency.runInTransaction(request(key), async ({ tx }) => {
    await subject.insert(tx as Tx, key);
    return { status: 201, body: { key } };
  });
  await warm('first', first);
  const oncely = await perOperation(counter, count, (i) => first(`${prefix}-first-${i}`).then(() => undefined));
  const replay = await perOperation(counter, count, (i) => first(`${prefix}-first-${i}`).then(() => undefined));
  const joined = (key: string) =>
    subject.transaction(async (tx) => {
      await idempotency.runInTransaction(request(key), async ({ tx: inner }) => {
        await subject.insert(inner as Tx, key);
        return { status: 201, body: { key } };
      }, { tx: tx as never });
    });
  await warm('join', joined);
  const join = await perOperation(counter, count, (i) => joined(`${prefix}-join-${i}`));
  return { baseline, oncely, replay, join };
}

/**
 * The subjects, each on its own connection through the proxy (one connection: nothing else shares the count).
 * Prisma is not among them: it needs a generated client; @oncely/postgres's test/bridges/round-trips.test.ts counts it with this proxy.
 */
async function subjects(url: string): Promise<Subject<unknown, unknown>[]> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const drizzlePool = new pg.Pool({ connectionString: url, max: 1 });
  const nodePg = drizzleNodePg(drizzlePool);
  const client = postgres(url, { max: 1, onnotice: () => undefined });
  const pgJs = drizzlePostgresJs(client);
  const kyselyPool = new pg.Pool({ connectionString: url, max: 1 });
  const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: kyselyPool }) });
  const knexDb = knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  const dataSource = await new DataSource({ type: 'postgres', url, poolSize: 1 }).initialize();
  const mikro = await MikroORM.init({ clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false }, pool: { min: 0, max: 1 } });
  const list = [
    {
      name: 'pg (raw driver, oncely\'s own path)',
      db: pool,
      async transaction(work: (tx: pg.PoolClient) => Promise<void>) {
        const held = await pool.connect();
        try {
          await held.query('BEGIN');
          await work(held);
          await held.query('COMMIT');
        } finally {
          held.release();
        }
      },
      insert: async (tx: { query(text: string, params: unknown[]): Promise<unknown> }, key: string) => {
        await tx.query(INSERT, [key, 1]);
      },
      close: () => pool.end(),
    },
    {
      name: 'Drizzle (node-postgres)',
      db: nodePg,
      bridge: drizzleBridge<typeof nodePg>(),
      transaction: (work: (tx: Parameters<Parameters<typeof nodePg.transaction>[0]>[0]) => Promise<void>) => nodePg.transaction(work),
      insert: async (tx: typeof nodePg, key: string) => {
        await tx.execute(drizzleSql`INSERT INTO bench_bridges.payments (idempotency_key, amount) VALUES (${key}, 1)`);
      },
      close: () => drizzlePool.end(),
    },
    {
      name: 'Drizzle (postgres.js)',
      db: pgJs,
      bridge: drizzleBridge<typeof pgJs>(),
      transaction: (work: (tx: Parameters<Parameters<typeof pgJs.transaction>[0]>[0]) => Promise<void>) => pgJs.transaction(work),
      insert: async (tx: typeof pgJs, key: string) => {
        await tx.execute(drizzleSql`INSERT INTO bench_bridges.payments (idempotency_key, amount) VALUES (${key}, 1)`);
      },
      close: () => client.end({ timeout: 5 }),
    },
    {
      name: 'Kysely (PostgresDialect, pg)',
      db: kysely,
      bridge: kyselyBridge<Record<string, never>>(),
      transaction: (work: (tx: Kysely<Record<string, never>>) => Promise<void>) => kysely.transaction().execute(work),
      insert: async (tx: Kysely<Record<string, never>>, key: string) => {
        await tx.executeQuery(CompiledQuery.raw(INSERT, [key, 1]));
      },
      close: () => kysely.destroy(),
    },
    {
      name: 'Knex (pg)',
      db: knexDb,
      bridge: knexBridge(),
      transaction: (work: (tx: knex.Knex.Transaction) => Promise<void>) => knexDb.transaction(work),
      insert: async (tx: knex.Knex, key: string) => {
        await tx.raw(`INSERT INTO ${PAYMENTS} (idempotency_key, amount) VALUES (?, ?)`, [key, 1]);
      },
      close: () => knexDb.destroy(),
    },
    {
      name: 'TypeORM (pg)',
      db: dataSource,
      bridge: typeormBridge(),
      transaction: (work: (tx: TypeormManager) => Promise<void>) => dataSource.transaction(work),
      insert: async (tx: TypeormManager, key: string) => {
        await tx.query(INSERT, [key, 1]);
      },
      close: () => dataSource.destroy(),
    },
    {
      name: 'MikroORM 6 (pg)',
      db: mikro.em,
      bridge: mikroOrmBridge<MikroEntityManager>(),
      transaction: (work: (tx: MikroEntityManager) => Promise<void>) => mikro.em.transactional(work),
      insert: async (tx: MikroEntityManager, key: string) => {
        await tx.getConnection().execute(`INSERT INTO ${PAYMENTS} (idempotency_key, amount) VALUES (?, ?)`, [key, 1], 'run', tx.getTransactionContext());
      },
      close: () => mikro.close(true),
    },
    // An isolation level: oncely's claim message sets it (SET TRANSACTION first), so these keep the held route.
    {
      name: 'TypeORM (pg), SERIALIZABLE',
      db: dataSource,
      bridge: typeormBridge({ isolationLevel: 'SERIALIZABLE' }),
      transaction: (work: (tx: TypeormManager) => Promise<void>) => dataSource.transaction('SERIALIZABLE', work),
      insert: async (tx: TypeormManager, key: string) => {
        await tx.query(INSERT, [key, 1]);
      },
      close: async () => undefined,
    },
    {
      name: 'MikroORM 6 (pg), SERIALIZABLE',
      db: mikro.em,
      bridge: mikroOrmBridge<MikroEntityManager>({ isolationLevel: IsolationLevel.SERIALIZABLE }),
      transaction: (work: (tx: MikroEntityManager) => Promise<void>) => mikro.em.transactional(work, { isolationLevel: IsolationLevel.SERIALIZABLE }),
      insert: async (tx: MikroEntityManager, key: string) => {
        await tx.getConnection().execute(`INSERT INTO ${PAYMENTS} (idempotency_key, amount) VALUES (?, ?)`, [key, 1], 'run', tx.getTransactionContext());
      },
      close: async () => undefined,
    },
  ];
  return list as unknown as Subject<unknown, unknown>[];
}

/**
 * Round trips each ORM bridge adds over the ORM's own transaction (the BEGIN … COMMIT it sends
 * anyway around one business insert), counted on the wire by the proxy: a first request, a replay,
 * and joining the application's transaction. The raw `pg` path is the target: it adds none.
 */
export async function runBridgesSuite(options: BenchOptions, report: Report): Promise<void> {
  const url = await ensureBenchDatabase(options.databaseUrl);
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  const proxy = await startPgRoundTripProxy(url);
  const all = await subjects(proxy.url);
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await migrate(admin, { schema: SCHEMA });
    await admin.query(`CREATE TABLE ${PAYMENTS} (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, amount integer NOT NULL)`);
    const rows: (string | number)[][] = [];
    const prefix = `b${Date.now().toString(36)}`;
    for (const [index, subject] of all.entries()) {
      const counted = await countSubject(subject, () => proxy.traffic(), options.countOps, `${prefix}-${index}`);
      const fmt = (n: number) => Number(n.toFixed(2));
      rows.push([subject.name, fmt(counted.baseline), fmt(counted.oncely), fmt(counted.oncely - counted.baseline), fmt(counted.replay), fmt(counted.join), fmt(counted.join - counted.baseline)]);
    }
    report.section(
      'ORM bridges: round trips per operation over the ORM\'s own transaction',
      `${markdownTable(
        ['ORM (driver)', 'ORM transaction + 1 insert', 'oncely first request', 'added', 'oncely replay', 'joined (ORM transaction + oncely inside)', 'join adds'],
        rows,
      )}\n\nCounted by a TCP proxy in front of PostgreSQL: the times the client waited for the server (messages written together count once; postgres.js waits on a \`Describe\` before each unprepared statement with parameters, Drizzle's, and that counts too), ${options.countOps} sequential operations each after a warm-up, one connection per subject.`,
    );
  } finally {
    for (const subject of all) await subject.close();
    await proxy.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => undefined);
    await admin.end();
  }
}
