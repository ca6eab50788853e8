import { createIdempotency } from '@oncely/core';
import { migrate, postgresStore } from '@oncely/postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { type Binding, bindings } from '../support/bindings.js';
import { DATABASE_URL } from '../support/databases.js';
import {
  createPayments,
  expectClean,
  faultOnce,
  paymentRows,
  paymentsRoute,
  type PrivatePostgres,
  privatePostgres,
  runName,
  runStorm,
  type Storm,
  type StormProgress,
  stormResources,
  terminateBackends,
} from '../support/storms.js';

/**
 * PostgreSQL storms through real HTTP: backends terminated every 30 ms on the shared server (only this
 * run's, by application_name), and a private server restarted mid-run. Each storm type runs in both
 * modes, on a different binding each time, so fetch, Express and Fastify all face a storm.
 */

const binding = (name: Binding['name']) => bindings.find((candidate) => candidate.name === name)!;

const resources = stormResources();
afterAll(() => resources.dispose());

describe('pg_terminate_backend every 30 ms on the pool’s backends', () => {
  const terminate = (applicationName: string) => (): Promise<Storm> => terminateBackends(DATABASE_URL, applicationName, 30);

  it('transaction mode, Fastify: no crash, no 500, one payment per key, every 2xx names it', async () => {
    const name = runName('storm_tx_kill');
    const pool = resources.pool(DATABASE_URL, name);
    await migrate(pool, { schema: name });
    await createPayments(pool, name);
    resources.defer(() => pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`));
    const report = await runStorm({
      name,
      binding: binding('fastify'),
      engine: createIdempotency({ store: postgresStore({ db: pool, schema: name }) }),
      route: paymentsRoute(name, 'transaction'),
      keys: 120,
      duplicates: 4,
      concurrency: 8,
      fault: terminate(name),
      stormMs: 5_000,
      settleMs: 8_000,
      rows: () => paymentRows(pool, name),
    });
    expectClean(report);
    expect(report.statuses['503'] ?? 0, 'the storm reached the clients').toBeGreaterThan(0);
    expect(report.killed).toBeGreaterThan(20);
    expect(report.unsettledKeys, 'transaction mode leaves nothing in progress').toBe(0);
  }, 30_000);

  it('lease mode, Express: no crash, no 500, one payment per key, every 2xx names it', async () => {
    const name = runName('storm_lease_kill');
    const pool = resources.pool(DATABASE_URL, name);
    await migrate(pool, { schema: name });
    const business = await resources.business(name);
    const report = await runStorm({
      name,
      binding: binding('express'),
      engine: createIdempotency({ store: postgresStore({ db: pool, schema: name }) }),
      route: paymentsRoute(name, 'lease', business),
      keys: 100,
      duplicates: 3,
      concurrency: 8,
      fault: terminate(name),
      stormMs: 4_000,
      settleMs: 3_000,
      rows: () => paymentRows(business, name),
    });
    expectClean(report);
    expect(report.statuses['503'] ?? 0, 'the storm reached the clients').toBeGreaterThan(0);
    expect(report.killed).toBeGreaterThan(20);
  }, 30_000);
});

describe('a private PostgreSQL restarted mid-run', () => {
  let server: PrivatePostgres | undefined;
  const privateServer = async () => {
    if (!server) {
      const started = await privatePostgres();
      server = started;
      resources.defer(() => started.dispose());
    }
    return server;
  };

  /** Restarts the server once, when a fifth of the keys are settled: the rest are in flight. */
  const restartOnce = (target: PrivatePostgres, mode: 'fast' | 'immediate') => async (progress: StormProgress) =>
    faultOnce(progress, 30, () => target.restart(mode));

  it('transaction mode, fetch, restart -m immediate (a crash): no crash, no 500, one payment per key', async () => {
    const target = await privateServer();
    const name = runName('storm_tx_restart');
    const pool = resources.pool(target.url, name);
    await migrate(pool, { schema: name });
    await createPayments(pool, name);
    const report = await runStorm({
      name,
      binding: binding('fetch'),
      engine: createIdempotency({ store: postgresStore({ db: pool, schema: name }) }),
      route: paymentsRoute(name, 'transaction'),
      keys: 150,
      duplicates: 3,
      concurrency: 8,
      fault: restartOnce(target, 'immediate'),
      stormMs: 4_000,
      settleMs: 8_000,
      rows: () => paymentRows(pool, name),
    });
    expectClean(report);
    expect(report.statuses['503'] ?? 0, 'the storm reached the clients').toBeGreaterThan(0);
    expect(report.killed).toBe(1);
    expect(report.unsettledKeys).toBe(0);
  }, 30_000);

  it('lease mode, Fastify, restart -m fast: no crash, no 500, one payment per key', async () => {
    const target = await privateServer();
    const name = runName('storm_lease_restart');
    const pool = resources.pool(target.url, name);
    await migrate(pool, { schema: name });
    const business = await resources.business(name);
    const report = await runStorm({
      name,
      binding: binding('fastify'),
      engine: createIdempotency({ store: postgresStore({ db: pool, schema: name }) }),
      route: paymentsRoute(name, 'lease', business),
      keys: 150,
      duplicates: 3,
      concurrency: 8,
      fault: restartOnce(target, 'fast'),
      stormMs: 4_000,
      settleMs: 3_000,
      rows: () => paymentRows(business, name),
    });
    expectClean(report);
    expect(report.statuses['503'] ?? 0, 'the storm reached the clients').toBeGreaterThan(0);
    expect(report.killed).toBe(1);
  }, 30_000);
});
