import { createIdempotency } from '@oncely/core';
import { oncelyAdapter, prismaBridge, type PrismaTx } from '@oncely/postgres/prisma';
import { uniqueKey } from '@oncely/testkit';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';
import { paymentsTable } from './cases/bridge-case.js';
import { PrismaClient } from './prisma/generated/client.js';

// Prisma on oncelyAdapter: oncely opens the transaction on a connection of the pool and Prisma's
// interactive transaction runs on it (prisma-held-adapter.ts); these are its guards and fallbacks.
const { pool: observer, schema } = migratedSchema('prisma_held', { max: 2 });
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 3 });
pool.on('error', () => undefined);
let prisma: PrismaClient;
beforeAll(async () => {
  await observer.query(paymentsTable(schema));
  prisma = new PrismaClient({ adapter: oncelyAdapter(new PrismaPg(pool, { schema }), pool) });
});
afterAll(async () => {
  await prisma?.$disconnect();
  await pool.end();
});

type Tx = PrismaTx<PrismaClient>;
const request = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 10 } });
const pid = async (on: { $queryRawUnsafe<T>(text: string): PromiseLike<T> }) => (await on.$queryRawUnsafe<{ pid: number }[]>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
const level = async (tx: Tx) => (await tx.$queryRawUnsafe<{ transaction_isolation: string }[]>('SHOW transaction_isolation'))[0]!.transaction_isolation;
const record = (key: string) => rawRecord(observer, `"${schema}".oncely_idempotency`, request(key));
const payments = async (key: string) => (await observer.query(`SELECT count(*)::int AS n FROM "${schema}".bridge_payments WHERE idem_key = $1`, [key])).rows[0].n;

describe('prisma on oncelyAdapter: the transaction oncely opens, with Prisma’s transaction client over its connection', () => {
  it('the handler runs inside the transaction the claim opened, on the connection the claim went out on; a tx kept past the handler is refused', async () => {
    const bridge = prismaBridge<PrismaClient>({ timeout: 15_000 });
    expect(bridge.pg?.pool(prisma)).toBe(pool);
    const idempotency = createIdempotency({ store: postgresStore({ db: prisma, bridge, schema }) });
    const key = uniqueKey('held');
    let kept: Tx | undefined;
    const result = await idempotency.runInTransaction(request(key), async ({ tx }) => {
      kept = tx;
      const [mine] = await tx.$queryRawUnsafe<{ state: string; xmin: string; xid: string }[]>(
        `SELECT state, xmin::text AS xmin, (pg_current_xact_id()::text::bigint % 4294967296)::text AS xid FROM "${schema}".oncely_idempotency WHERE idempotency_key = $1`,
        key,
      );
      await tx.payment.create({ data: { key, amount: 10 } });
      return { status: 201, body: { state: mine?.state, same: mine?.xmin === mine?.xid } };
    });
    expect(result).toMatchObject({ kind: 'executed', response: { body: { state: 'in_progress', same: true } } });
    await expect(kept!.$queryRawUnsafe('SELECT 1')).rejects.toThrow(/closed|ended/i);
  });

  it("the client's own $transaction, even one started inside a handler, runs on another connection: only oncely's takes the held one", async () => {
    const idempotency = createIdempotency({ store: postgresStore({ db: prisma, bridge: prismaBridge<PrismaClient>({ timeout: 15_000 }), schema }) });
    const result = await idempotency.runInTransaction(request(uniqueKey('own')), async ({ tx }) => {
      const mine = await pid(tx);
      const theirs = await prisma.$transaction((other) => pid(other));
      return { status: 201, body: { apart: mine !== theirs } };
    });
    expect(result).toMatchObject({ kind: 'executed', response: { body: { apart: true } } });
  });

  it("the bridge's isolation level opens the transaction at it, on the held route", async () => {
    const bridge = prismaBridge<PrismaClient>({ timeout: 15_000, isolationLevel: 'Serializable' });
    const idempotency = createIdempotency({ store: postgresStore({ db: prisma, bridge, schema }) });
    const result = await idempotency.runInTransaction(request(uniqueKey('iso')), async ({ tx }) => ({ status: 201, body: { level: await level(tx) } }));
    expect(result).toMatchObject({ kind: 'executed', response: { body: { level: 'serializable' } } });
  });

  it("a client-wide isolation level the bridge does not name is refused before the handler runs: the claim rolls back", async () => {
    const strict = new PrismaClient({ adapter: oncelyAdapter(new PrismaPg(pool, { schema }), pool), transactionOptions: { isolationLevel: 'RepeatableRead' } });
    try {
      const idempotency = createIdempotency({ store: postgresStore({ db: strict, bridge: prismaBridge<PrismaClient>(), schema }) });
      const key = uniqueKey('iso-client');
      let ran = false;
      await expect(
        idempotency.runInTransaction(request(key), async () => {
          ran = true;
          return { status: 201 };
        }),
      ).rejects.toThrow(/prismaBridge\(\{ isolationLevel \}\)/);
      expect({ ran, record: await record(key) }).toEqual({ ran: false, record: undefined });
    } finally {
      await strict.$disconnect();
    }
  });

  it('an adapter that opens its transaction with anything but BEGIN is refused before the handler runs: the claim rolls back', async () => {
    const real = new PrismaPg(pool, { schema });
    const odd = Object.create(real, {
      connect: {
        async value() {
          const adapter = await real.connect();
          return Object.create(adapter, {
            startTransaction: {
              async value(this: { client: pg.Pool }) {
                const connection = await this.client.connect();
                await connection.query({ text: 'START TRANSACTION' });
                return adapter.startTransaction.call(this);
              },
            },
          });
        },
      },
    });
    const client = new PrismaClient({ adapter: oncelyAdapter(odd, pool) });
    try {
      const idempotency = createIdempotency({ store: postgresStore({ db: client, bridge: prismaBridge<PrismaClient>(), schema }) });
      const key = uniqueKey('odd');
      await expect(idempotency.runInTransaction(request(key), async () => ({ status: 201 }))).rejects.toThrow(/"START TRANSACTION", not BEGIN/);
      expect(await record(key)).toBeUndefined();
    } finally {
      await client.$disconnect();
    }
  });

  it('oncelyAdapter over a PrismaPg built on another pool is refused when the client connects', async () => {
    const other = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    const client = new PrismaClient({ adapter: oncelyAdapter(new PrismaPg(other, { schema }), pool) });
    try {
      await expect(client.$connect()).rejects.toThrow(/built on the pg.Pool given with it/);
    } finally {
      await client.$disconnect().catch(() => undefined);
      await other.end();
    }
  });

  it("a plain client (no oncelyAdapter) keeps Prisma's own $transaction", async () => {
    const plain = new PrismaClient({ adapter: new PrismaPg(pool, { schema }) });
    try {
      expect(prismaBridge<PrismaClient>().pg?.pool(plain)).toBeUndefined();
    } finally {
      await plain.$disconnect();
    }
  });

  it("Prisma's timeout running out in the handler fails the call with a StorageError: nothing commits, and the retry executes", async () => {
    const idempotency = createIdempotency({ store: postgresStore({ db: prisma, bridge: prismaBridge<PrismaClient>({ timeout: 300 }), schema }) });
    const key = uniqueKey('timeout');
    const slow = async ({ tx }: { tx: Tx }) => {
      await tx.payment.create({ data: { key, amount: 10 } });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return { status: 201 };
    };
    await expect(idempotency.runInTransaction(request(key), slow)).rejects.toMatchObject({ code: 'storage_error', operation: 'commit' });
    expect({ record: await record(key), rows: await payments(key) }).toEqual({ record: undefined, rows: 0 });
    const quick = createIdempotency({ store: postgresStore({ db: prisma, bridge: prismaBridge<PrismaClient>({ timeout: 15_000 }), schema }) });
    expect((await quick.runInTransaction(request(key), slow)).kind).toBe('executed');
    expect(await payments(key)).toBe(1);
  });
});
