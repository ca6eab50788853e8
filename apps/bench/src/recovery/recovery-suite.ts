import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIdempotency } from '@oncely/core';
import { withIdempotency } from '@oncely/http';
import { migrate, type PostgresTx, postgresStore } from '@oncely/postgres';
import { listenablePort, PRIVATE_PORTS } from '@oncely/test-support';
import pg from 'pg';
import type { BenchOptions } from '../cli/options.js';
import { formatRatio, markdownTable } from '../harness/markdown.js';
import type { Report } from '../harness/report.js';
import { median } from '../harness/stats.js';
import { startBenchPostgres } from '../servers/private-postgres.js';

/** The pool every service in this suite runs on: what the recovery figures depend on. */
export const RECOVERY_POOL = { max: 8, connectionTimeoutMillis: 2_000, idleTimeoutMillis: 10_000 } as const;
const STORM_MS = 2_000;
const KILL_EVERY_MS = 30;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A service: a POST /payments handler on node:http over its own pool. */
interface Service {
  readonly url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const insert = 'INSERT INTO payments (key) VALUES ($1) RETURNING id::text AS id';

/** The baseline: the same business transaction on a pg.Pool with no idempotency (503 on any failure). */
async function rawService(pool: pg.Pool): Promise<Service> {
  const server = createServer((req, res) => {
    const key = String(req.headers['idempotency-key']);
    req.resume();
    (async () => {
      const client = await pool.connect();
      // Heard while checked out, and removed at release: a listener per checkout would pile up on a reused client.
      const ignore = () => undefined;
      client.on('error', ignore);
      try {
        await client.query('BEGIN');
        const { rows } = await client.query<{ id: string }>(insert, [key]);
        await client.query('COMMIT');
        client.removeListener('error', ignore);
        client.release();
        return rows[0]!.id;
      } catch (error) {
        client.removeListener('error', ignore);
        client.release(error as Error);
        throw error;
      }
    })().then(
      (id) => res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id })),
      () => res.writeHead(503, { 'retry-after': '1' }).end(),
    );
  });
  const url = await listen(server);
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** oncely: `withIdempotency` in transaction mode on `postgresStore`, the same insert through `tx`. */
async function oncelyService(pool: pg.Pool): Promise<Service> {
  const engine = createIdempotency({ store: postgresStore({ db: pool }) });
  const handler = withIdempotency(
    async (request, context) => {
      if (context.kind !== 'transaction') throw new Error('the route requires a key');
      const { rows } = await (context.tx as PostgresTx).query<{ id: string }>(insert, [request.headers.get('idempotency-key')]);
      return Response.json({ id: rows[0]!.id }, { status: 201 });
    },
    { engine, mode: 'transaction', operation: 'payments.recovery.v1', scope: () => ({ tenant: 'bench' }) },
  );
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const response = await handler(new Request(`http://bench${req.url}`, { method: 'POST', headers, body: Buffer.concat(chunks) }));
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        out[name] = value;
      });
      res.writeHead(response.status, out).end(Buffer.from(await response.arrayBuffer()));
    });
  });
  const url = await listen(server);
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** One POST with a fresh key; resolves its status and when it ended (0 for a refused connection). */
function post(url: string, key: string): Promise<{ status: number; at: number }> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ amount: 100 });
    const req = request(`${url}/payments`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': key },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, at: performance.now() }));
    });
    req.on('error', () => resolve({ status: 0, at: performance.now() }));
    req.end(body);
  });
}

/** A sequential client, one request every 10 ms, until stopped; the answers in order. */
function probe(url: string, label: string) {
  const answers: { status: number; at: number }[] = [];
  let stopped = false;
  let n = 0;
  const done = (async () => {
    while (!stopped) {
      answers.push(await post(url, `${label}-${n++}`));
      await sleep(10);
    }
  })();
  return {
    answers,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

type Fault = 'storm' | 'restart-fast' | 'restart-immediate';

/** Runs `fault` under one service with the probe going; ms from the fault's end to the first 2xx, and the non-2xx count. */
async function measure(url: string, pool: pg.Pool, admin: pg.Pool, fault: Fault, restart: (mode: 'fast' | 'immediate') => Promise<void>, label: string) {
  const client = probe(url, label);
  await sleep(300);
  const appName = (pool.options as { application_name?: string }).application_name;
  if (fault === 'storm') {
    const until = performance.now() + STORM_MS;
    while (performance.now() < until) {
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [appName]).catch(() => undefined);
      await sleep(KILL_EVERY_MS);
    }
  } else {
    await restart(fault === 'restart-fast' ? 'fast' : 'immediate');
  }
  const ended = performance.now();
  while (!client.answers.some((answer) => answer.at > ended && answer.status === 201) && performance.now() < ended + 30_000) await sleep(5);
  await client.stop();
  const first = client.answers.find((answer) => answer.at > ended && answer.status === 201);
  return {
    recoverMs: first ? first.at - ended : Number.POSITIVE_INFINITY,
    failed: client.answers.filter((answer) => answer.status !== 201).length,
    fiveHundreds: client.answers.filter((answer) => answer.status >= 500 && answer.status !== 503).length,
  };
}

/**
 * Recovery: how long after a connection storm ends, or after `pg_ctl restart` returns, until a service
 * answers 2xx again, oncely (transaction mode on `postgresStore`) against the same business transaction
 * on a plain pool, in alternating rounds on a private PostgreSQL.
 */
export async function runRecoverySuite(options: BenchOptions, report: Report): Promise<void> {
  const port = await listenablePort(PRIVATE_PORTS.bench, 10);
  const server = await startBenchPostgres(port);
  const admin = new pg.Pool({ connectionString: server.url, max: 1 });
  admin.on('error', () => undefined);
  const faults: Fault[] = ['storm', 'restart-fast', 'restart-immediate'];
  const contenders = [
    { name: 'pg.Pool, no idempotency', start: rawService },
    { name: 'oncely transaction mode', start: oncelyService },
  ] as const;
  const results = new Map<string, { recoverMs: number; failed: number; fiveHundreds: number }[]>();
  try {
    const setup = new pg.Pool({ connectionString: server.url, max: 1 });
    await migrate(setup);
    await setup.query('CREATE TABLE payments (id bigserial PRIMARY KEY, key text NOT NULL)');
    await setup.end();
    for (let round = 0; round < options.rounds; round++) {
      for (const fault of faults) {
        for (let i = 0; i < contenders.length; i++) {
          const contender = contenders[(i + round) % contenders.length]!;
          const appName = `bench_recovery_${round}_${i}`;
          const pool = new pg.Pool({ connectionString: server.url, application_name: appName, ...RECOVERY_POOL });
          pool.on('error', () => undefined);
          const service = await contender.start(pool);
          const result = await measure(service.url, pool, admin, fault, (mode) => server.restart(mode), `${fault}-${round}-${i}`);
          await service.close();
          await pool.end().catch(() => undefined);
          const key = `${fault}\n${contender.name}`;
          results.set(key, [...(results.get(key) ?? []), result]);
        }
      }
    }
  } finally {
    await admin.end().catch(() => undefined);
    await server.stop();
  }
  const rows = faults.flatMap((fault) => {
    const baseline = results.get(`${fault}\n${contenders[0].name}`)!;
    return contenders.map((contender, index) => {
      const list = results.get(`${fault}\n${contender.name}`)!;
      const ratio = median(list.map((run, round) => run.recoverMs / baseline[round]!.recoverMs));
      return [
        fault,
        contender.name,
        median(list.map((run) => run.recoverMs)).toFixed(0),
        index === 0 ? 'baseline' : formatRatio(ratio),
        median(list.map((run) => run.failed)),
        list.reduce((sum, run) => sum + run.fiveHundreds, 0),
      ];
    });
  });
  report.section(
    'Recovery: time until the service answers 2xx again',
    [
      markdownTable(['fault', 'service', 'ms to the first 2xx after it (median)', '÷ plain pool', 'non-2xx answers per run (median)', '5xx other than 503, all runs'], rows),
      '',
      `A private PostgreSQL (port ${port}); a client sends \`POST /payments\` with a fresh key every 10 ms, one at a time. \`storm\`:`,
      `\`pg_terminate_backend\` on the pool's backends every ${KILL_EVERY_MS} ms for ${STORM_MS / 1000} s, timed from the last kill; \`restart-fast\` /`,
      '`restart-immediate`: `pg_ctl restart -m fast|immediate -w`, timed from when it returned (the server accepts connections).',
      `Pool: \`max: ${RECOVERY_POOL.max}, connectionTimeoutMillis: ${RECOVERY_POOL.connectionTimeoutMillis}, idleTimeoutMillis: ${RECOVERY_POOL.idleTimeoutMillis}\`, plus \`pool.on('error')\`; pg-pool drops a`,
      'client whose connection failed and opens a new one on the next checkout, so recovery is one connect away. Medians over',
      `${options.rounds} rounds, contenders alternating; the ratio is the median of per-round ratios.`,
    ].join('\n'),
  );
}
