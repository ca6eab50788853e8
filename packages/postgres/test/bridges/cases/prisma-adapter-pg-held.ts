import { oncelyAdapter } from '@oncely/postgres/prisma';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../prisma/generated/client.js';
import type { BridgeCase } from './bridge-case.js';
import { prismaAdapterPg } from './prisma-adapter-pg.js';

/** Prisma 7 on adapter-pg wrapped by oncelyAdapter: oncely opens the transaction on a connection of the pool and Prisma's runs on it. */
export const prismaAdapterPgHeld: BridgeCase<PrismaClient, Parameters<typeof prismaAdapterPg.insert>[0]> = {
  ...prismaAdapterPg,
  name: 'prisma 7 (adapter-pg, oncelyAdapter)',
  async open(url, max, schema) {
    const pool = new pg.Pool({ connectionString: url, max });
    pool.on('error', () => undefined);
    const client = new PrismaClient({ adapter: oncelyAdapter(new PrismaPg(pool, { schema }), pool) });
    await client.$connect();
    return {
      db: client,
      close: async () => {
        await client.$disconnect();
        await pool.end();
      },
    };
  },
};

export default prismaAdapterPgHeld;
