import { createIdempotency } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { createBusinessTables, ledger, openAccount } from '../support/business.js';
import { migratedSchema, rawRecord } from '../support/database.js';
import { blockedOnLock, until } from '../support/wait.js';
import { assertBuilt, type CallerResult, DRIVERS, runClient, runOnce, startClient } from './child.js';

// Registered first, so a missing dist/ is reported before any setup runs.
beforeAll(assertBuilt);
const { pool: observer, schema, table: TABLE } = migratedSchema('failure', { max: 3 });
beforeAll(() => createBusinessTables(observer, schema));

/** A fresh account with 100 and a fresh key: each scenario owns its rows. */
async function scenario() {
  const account = uniqueKey('acct');
  await openAccount(observer, schema, account, 100);
  const key = uniqueKey('charge');
  const scope = { tenant: 'acme', principal: 'alice', operation: 'charges.create.v1', key };
  return {
    account,
    key,
    books: () => ledger(observer, schema, account),
    record: () => rawRecord(observer, TABLE, scope),
  };
}

const responseOf = (result: CallerResult | undefined) =>
  result && (result.kind === 'executed' || result.kind === 'replayed') ? result.response : result;

for (const driver of DRIVERS) describe(`failure boundaries on real PostgreSQL, with real processes (${driver})`, () => {
  it('crash before commit: the SIGKILLed attempt leaves nothing, the retry executes once', async () => {
    const { account, key, books, record } = await scenario();
    const doomed = startClient({ driver, schema, account, key, amount: 10, pauseAt: 'business-written' });
    await doomed.point('business-written');
    // The charge is written but not committed: nobody else can see it.
    expect(await books()).toEqual({ charges: 0, amounts: [], balance: 100 });
    await doomed.kill();
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const retry = await runOnce({ driver, schema, account, key, amount: 10 });
    expect(retry?.kind).toBe('executed');
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
    expect((await record())?.state).toBe('succeeded');
    const again = await runOnce({ driver, schema, account, key, amount: 10 });
    expect(again).toEqual({ kind: 'replayed', state: 'succeeded', response: responseOf(retry) });
    expect((await books()).charges).toBe(1);
  });

  it('lease mode, crash while holding the lease: retries see in_progress until it lapses by the database clock, then one takes over and executes once', async () => {
    const { account, key, books, record } = await scenario();
    const lease = { driver, schema, account, key, amount: 10, mode: 'lease', leaseMs: 2_000 } as const;
    const doomed = startClient({ ...lease, pauseAt: 'lease-claimed' });
    await doomed.point('lease-claimed');
    await doomed.kill();
    // Asked at once (from this process, no start-up delay), the key is still held by the dead owner.
    const engine = createIdempotency({ store: postgresStore({ db: observer, schema }), leaseMs: 2_000 });
    const early = await engine.run(
      { tenant: 'acme', principal: 'alice', operation: 'charges.create.v1', key, request: { account, amount: 10 } },
      async () => ({ status: 500 }),
    );
    expect(early.kind).toBe('in_progress');
    const late = await runOnce({ ...lease, retryInProgress: true });
    expect(late?.kind).toBe('executed');
    expect(await record()).toMatchObject({ state: 'succeeded', fence: 2 });
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  for (const mode of ['transaction', 'lease'] as const) {
    it(`200 concurrent duplicates across 4 processes (${mode} mode): one charge, and every caller gets the same response`, async () => {
      const { account, key, books } = await scenario();
      const clients = Array.from({ length: 4 }, () =>
        startClient({ driver, schema, account, key, amount: 10, mode, callers: 50, waitForGo: true, retryInProgress: true }),
      );
      await Promise.all(clients.map((client) => client.point('ready')));
      for (const client of clients) client.send('go');
      const results = (await Promise.all(clients.map((client) => client.point('round-1')))).flatMap((message) => message.results ?? []);
      await Promise.all(clients.map((client) => client.exited));
      expect(results).toHaveLength(200);
      expect(results.filter((result) => result.kind === 'executed')).toHaveLength(1);
      expect(results.filter((result) => result.kind === 'replayed')).toHaveLength(199);
      const first = responseOf(results.find((result) => result.kind === 'executed'));
      for (const result of results) expect(responseOf(result)).toEqual(first);
      expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
    });
  }

  it('same key, different body, while the first is still running: mismatch, and only the first charge exists', async () => {
    const { account, key, books } = await scenario();
    const first = startClient({ driver, schema, account, key, amount: 10, pauseAt: 'business-written' });
    await first.point('business-written');
    const changed = startClient({ driver, schema, account, key, amount: 100, applicationName: 'oncely-changed-body' });
    await blockedOnLock(observer, 'oncely-changed-body');
    first.send('resume');
    const [firstResult] = (await first.point('round-1')).results ?? [];
    const [changedResult] = (await changed.point('round-1')).results ?? [];
    expect(firstResult?.kind).toBe('executed');
    expect(changedResult).toEqual({ kind: 'mismatch' });
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });

  it('expired record, late retry: replayed while retained, executed again once it expired (the documented semantics)', async () => {
    const { account, key, books, record } = await scenario();
    const retained = { driver, schema, account, key, amount: 10, leaseMs: 2_000, retentionMs: 2_000 };
    // Two rounds in one process: the second follows the first at once, well inside the retention.
    const [first, second] = await runClient({ ...retained, rounds: 2 });
    expect(first?.[0]?.kind).toBe('executed');
    expect(second?.[0]?.kind).toBe('replayed');
    expect((await books()).charges).toBe(1);
    await until('the record expires by the database clock', async () => {
      const { rows } = await observer.query(
        `SELECT expires_at <= statement_timestamp() AS expired FROM ${TABLE} WHERE idempotency_key = $1`,
        [key],
      );
      return rows[0]?.expired === true;
    });
    // Still in the table (nobody purged it), yet absent: the late retry is a new operation.
    expect((await record())?.state).toBe('succeeded');
    const late = await runOnce(retained);
    expect(late?.kind).toBe('executed');
    expect(await books()).toEqual({ charges: 2, amounts: [10, 10], balance: 80 });
  });

  it('connection terminated mid-transaction (pg_terminate_backend): StorageError, no charge, and the same process succeeds on retry', async () => {
    const { account, key, books, record } = await scenario();
    const client = startClient({ driver, schema, account, key, amount: 10, pauseAt: 'business-written', rounds: 2 });
    const { pid } = await client.point('business-written');
    const { rows } = await observer.query('SELECT pg_terminate_backend($1) AS terminated', [pid]);
    expect(rows[0].terminated).toBe(true);
    client.send('resume');
    const [failed] = (await client.point('round-1')).results ?? [];
    expect(failed).toMatchObject({ kind: 'error', code: 'storage_error' });
    expect(await books()).toEqual({ charges: 0, amounts: [], balance: 100 });
    expect(await record()).toBeUndefined();
    // Round 2 runs on the same pool, which replaced the dead connection.
    client.send('resume');
    const [retried] = (await client.point('round-2')).results ?? [];
    expect(retried?.kind).toBe('executed');
    await client.exited;
    expect(await books()).toEqual({ charges: 1, amounts: [10], balance: 90 });
  });
});
