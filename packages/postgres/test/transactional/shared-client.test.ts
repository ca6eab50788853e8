import { createIdempotency } from '@oncely/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';

const client = new pg.Client({ connectionString: DATABASE_URL });
const { pool: admin, schema, table } = migratedSchema('shared_client', { max: 1 });

beforeAll(() => client.connect());
afterAll(() => client.end());

describe('several oncely objects on one pg.Client', () => {
  it("never put one object's statement inside another's open transaction", async () => {
    // Two stores over one client: B's lease-mode claim must not join A's transaction and vanish in its rollback.
    const a = createIdempotency({ store: postgresStore({ db: client, schema }) });
    const b = createIdempotency({ store: postgresStore({ db: client, schema }) });
    const request = (key: string) => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: {} });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const rolledBack = a
      .runInTransaction(request('a-key'), async () => {
        entered();
        await new Promise((resolve) => setTimeout(resolve, 100));
        throw new Error('rollback');
      })
      .catch((error: Error) => error.message);
    await inside;
    const leased = await b.run(request('b-key'), async () => ({ status: 201, body: { id: 'b' } }));
    expect(await rolledBack).toBe('rollback');
    expect(leased.kind).toBe('executed');
    expect((await rawRecord(admin, table, { tenant: 'acme', principal: '', operation: 'payments.create.v1', key: 'b-key' }))?.state).toBe('succeeded');
    expect(await rawRecord(admin, table, { tenant: 'acme', principal: '', operation: 'payments.create.v1', key: 'a-key' })).toBeUndefined();
  });
});
