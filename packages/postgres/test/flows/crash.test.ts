import { fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createIdempotency, downstreamKey } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { assertBuilt } from '../failure/child.js';
import { DATABASE_URL, migratedSchema } from '../support/database.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/payment-flow.mjs', import.meta.url));
const LEASE_MS = 1_500;
/** Every point where a process dies: before the flow's first phase, inside and after each phase. */
const POINTS = ['claimed', 'inside-order', 'after-order', 'inside-charge', 'after-charge', 'inside-receipt', 'after-receipt'] as const;

beforeAll(assertBuilt);
const { pool, schema } = migratedSchema('flowcrash', { max: 4 });

/** The fake payment provider: counts calls, and answers a key it has seen with the same charge. */
const provider = { server: undefined as Server | undefined, calls: new Map<string, string[]>(), charges: new Map<string, string>() };
beforeAll(async () => {
  await pool.query(`CREATE TABLE "${schema}".orders (id bigserial PRIMARY KEY, idem_key text NOT NULL, amount integer NOT NULL)`);
  await pool.query(`CREATE TABLE "${schema}".receipts (idem_key text NOT NULL, order_id bigint NOT NULL, charge_id text NOT NULL)`);
  provider.server = createServer((request, response) => {
    const key = String(request.headers['idempotency-key']);
    const operation = String(request.headers['x-operation']);
    request.resume();
    request.on('end', () => {
      provider.calls.set(operation, [...(provider.calls.get(operation) ?? []), key]);
      if (!provider.charges.has(key)) provider.charges.set(key, `ch_${provider.charges.size + 1}`);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ chargeId: provider.charges.get(key) }));
    });
  });
  await new Promise<void>((resolve) => provider.server!.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => (provider.server ? provider.server.close(() => resolve()) : resolve())));

interface Done {
  readonly point: string;
  readonly result?: { kind: string; state?: string; response?: unknown; completed?: number; code?: string; message?: string };
}

/** A payments process: resolves its first message (a pause point, or `done`) and its exit. */
function spawn(config: Record<string, unknown>) {
  const port = (provider.server!.address() as AddressInfo).port;
  const child = fork(FIXTURE, [JSON.stringify({ databaseUrl: DATABASE_URL, schema, providerUrl: `http://127.0.0.1:${port}`, leaseMs: LEASE_MS, amount: 25, ...config })], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const message = new Promise<Done>((resolve, reject) => {
    child.once('message', (received: Done) => resolve(received));
    void exited.then((how) => reject(new Error(`the process exited (${how}) before it reported`)));
  });
  return { child, exited, message };
}

let tables = 0;
/** A scenario's own record table, so its completers see its flow only. */
async function scenarioTable(): Promise<string> {
  const table = `flows_${++tables}`;
  await migrate(pool, { schema, tables: { oncely_idempotency: table } });
  return table;
}

const count = async (table: string, key: string) =>
  Number((await pool.query(`SELECT count(*) AS n FROM "${schema}".${table} WHERE idem_key = $1`, [key])).rows[0].n);

describe.concurrent('a flow SIGKILLed at every phase boundary and inside every phase, then finished (real processes, real PostgreSQL, a real HTTP provider)', () => {
  for (const finisher of ['retry', 'completer'] as const) {
    for (const point of POINTS) {
      it(`killed at ${point}, finished by ${finisher === 'retry' ? "the client's retry" : 'two completers'}: one row per phase, one distinct downstream key, the recorded answer`, async () => {
        const table = await scenarioTable();
        const key = uniqueKey(`pay-${point}`);
        const doomed = spawn({ table, key, mode: 'run', pauseAt: point });
        expect((await doomed.message).point).toBe(point);
        doomed.child.kill('SIGKILL');
        expect(await doomed.exited).toBe('SIGKILL');

        const engine = createIdempotency({ store: postgresStore({ db: pool, schema, table }), leaseMs: LEASE_MS });
        const request = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key, request: { amount: 25 } };
        let answer: unknown;
        if (finisher === 'retry') {
          const retry = await spawn({ table, key, mode: 'retry' }).message;
          expect(retry.result?.kind).toBe('executed');
          answer = retry.result?.response;
        } else {
          const completers = [spawn({ table, key, mode: 'complete' }), spawn({ table, key, mode: 'complete' })];
          const rounds = await Promise.all(completers.map((completer) => completer.message));
          // One owner at a time: exactly one of the two completers finished the flow.
          expect(rounds.map((round) => round.result?.completed ?? 0).sort()).toEqual([0, 1]);
          const replay = await engine.flow(request, async () => {
            throw new Error('a finished flow ran again');
          });
          expect(replay.kind).toBe('replayed');
          answer = replay.kind === 'replayed' ? replay.response : undefined;
        }

        const record = await engine.get(request);
        expect(record?.state).toBe('succeeded');
        expect(answer).toEqual(record?.response);
        expect(await count('orders', key)).toBe(1);
        expect(await count('receipts', key)).toBe(1);
        const keys = new Set(provider.calls.get(key));
        // Killed after the provider answered: the charge was asked again, with the same key.
        if (point === 'inside-charge') expect(provider.calls.get(key)).toHaveLength(2);
        expect([...keys]).toEqual([await downstreamKey({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key }, 'provider.charge')]);
        expect(record?.response?.body).toMatchObject({ chargeId: provider.charges.get([...keys][0]!) });
      }, 30_000);
    }
  }
});
