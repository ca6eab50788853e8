import { createIdempotency, isStorageError } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { chargeHandler, createBusinessTables, ledger, openAccount } from '../support/business.js';
import { type PrivatePostgres, startPrivatePostgres } from '../support/private-postgres.js';
import { gate, until } from '../support/wait.js';

let server: PrivatePostgres;
let pool: pg.Pool;
const schema = 'public';
const account = 'acct-restart';

beforeAll(async () => {
  server = await startPrivatePostgres();
  pool = new pg.Pool({ connectionString: server.url, max: 5, connectionTimeoutMillis: 2_000 });
  // Idle connections die with the server; the pool replaces them.
  pool.on('error', () => undefined);
  await migrate(pool, { schema });
  await createBusinessTables(pool, schema);
  await openAccount(pool, schema, account, 100);
});
afterAll(async () => {
  await pool?.end();
  await server?.dispose();
});

describe('PostgreSQL restarted mid-run (a private cluster, crashed and started again)', () => {
  it('fails closed with StorageErrors while down, loses no committed outcome, charges nothing twice, and works again', async () => {
    const engine = createIdempotency({ store: postgresStore({ db: pool, schema }) });
    const request = (key: string) => ({ tenant: 'acme', operation: 'charges.create.v1', key, request: { account, amount: 10 } });
    const pay = (key: string) => engine.runInTransaction(request(key), chargeHandler(schema, account, 10));
    const before = [uniqueKey('before'), uniqueKey('before'), uniqueKey('before')];
    for (const key of before) expect((await pay(key)).kind).toBe('executed');

    // One payment is inside its transaction, charge written, when the server crashes.
    const inFlight = uniqueKey('in-flight');
    const inside = gate();
    const proceed = gate();
    const interrupted = engine
      .runInTransaction(request(inFlight), async (context) => {
        const response = await chargeHandler(schema, account, 10)(context);
        inside.open();
        await proceed.opened;
        return response;
      })
      .catch((error: unknown) => error);
    await inside.opened;
    await server.stop('immediate');
    proceed.open();
    expect(isStorageError(await interrupted)).toBe(true);

    const whileDown = uniqueKey('while-down');
    expect(isStorageError(await pay(whileDown).catch((error: unknown) => error))).toBe(true);
    const leaseDown = await engine.run(request(uniqueKey('lease-down')), async () => ({ status: 201 })).catch((error: unknown) => error);
    expect(isStorageError(leaseDown)).toBe(true);

    await server.start();
    await until('the pool reaches the restarted server', () => pool.query('SELECT 1').then(() => true, () => false));
    for (const key of before) expect((await pay(key)).kind).toBe('replayed');
    expect((await pay(inFlight)).kind).toBe('executed');
    expect((await pay(whileDown)).kind).toBe('executed');
    expect((await pay(inFlight)).kind).toBe('replayed');
    expect(await ledger(pool, schema, account)).toEqual({ charges: 5, amounts: [10, 10, 10, 10, 10], balance: 50 });
  });
});
