import { prismaBridge, type PrismaTx } from '@oncely/postgres/prisma';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../prisma/generated/client.js';
import type { BridgeCase } from './bridge-case.js';

type Tx = PrismaTx<PrismaClient>;

/** Prisma 7 with `@prisma/adapter-pg` (its query compiler, no engine binary): payments created through the model API. */
export const prismaAdapterPg: BridgeCase<PrismaClient, Tx> = {
  name: 'prisma 7 (adapter-pg)',
  // The suite's storms hold transactions open while 50 callers queue for a few connections.
  bridge: prismaBridge<PrismaClient>({ maxWait: 30_000, timeout: 30_000 }),
  async open(url, max, schema) {
    // Prisma qualifies every model table with the adapter's schema, so a client serves one schema.
    const client = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max }, { schema }) });
    await client.$connect();
    return { db: client, close: () => client.$disconnect() };
  },
  async insert(tx, _schema, row) {
    const payment = await tx.payment.create({ data: { key: row.key, amount: row.amount } });
    return String(payment.id);
  },
  nesting: 'savepoint',
  // Prisma 7 runs a $transaction inside an interactive transaction as a savepoint.
  nested: (tx, work) => tx.$transaction((inner) => work(inner)),
  async backendPid(tx) {
    const rows = await tx.$queryRawUnsafe<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
    return rows[0]!.pid;
  },
};

export default prismaAdapterPg;
