import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Idempotency, IdempotencyStore } from '@oncely/core';
import pg from 'pg';
import { expect } from 'vitest';
import { type Binding, type RouteSpec, withServer } from './bindings.js';
import { DATABASE_URL } from './databases.js';
import { postJson, type Received } from './send.js';
import { IOREDIS_UNHEARD, listenablePort, PRIVATE_PORTS, unheardErrors } from '@oncely/test-support';

/**
 * The machinery every storm test shares: process-wide error counting, killers for connections the
 * test owns (PostgreSQL backends by `application_name`, Redis clients by `CLIENT SETNAME`), private
 * servers to restart or SIGKILL (ports 31200–31299), clients that send each key several times at
 * once and retry 409/503 with the same key, and the verdict read from the database.
 */

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A unique name for this run's connections, schemas and keys. */
export const runName = (prefix: string) => `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;

/**
 * Counts unheard errors: uncaught exceptions and unhandled rejections (each would crash the process),
 * and the `'error'` events ioredis found no listener for (it logs those instead of throwing).
 */
export const crashCounter = () => unheardErrors({ logged: IOREDIS_UNHEARD });

/** A background fault that repeats until stopped; `count` is what it killed. */
export interface Storm {
  readonly count: () => number;
  stop(): Promise<void>;
}

/** Repeats `strike` every `everyMs` until stopped; a failed strike (server down) just waits for the next. */
function repeat(everyMs: number, strike: () => Promise<number>): Storm {
  let count = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      count += await strike().catch(() => 0);
      await sleep(everyMs);
    }
  })();
  return {
    count: () => count,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/**
 * One fault (a restart, a SIGKILL) once `settledKeys` keys of the storm have their answer, so it
 * lands while the rest are in flight however fast the machine is; `stop` waits until it is over.
 */
export function faultOnce(progress: StormProgress, settledKeys: number, strike: () => Promise<void>): Storm {
  let count = 0;
  const done = progress.settled(settledKeys).then(async () => {
    await strike();
    count++;
  });
  return { count: () => count, stop: () => done };
}

/** `pg_terminate_backend` on every backend named `applicationName`, every `everyMs`, from a connection of its own. */
export async function terminateBackends(url: string, applicationName: string, everyMs: number): Promise<Storm> {
  const admin = new pg.Client({ connectionString: url, application_name: `${applicationName}_killer` });
  admin.on('error', () => undefined);
  await admin.connect();
  const storm = repeat(everyMs, async () => {
    const { rows } = await admin.query<{ n: number }>(
      'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    return rows[0]?.n ?? 0;
  });
  return {
    count: storm.count,
    async stop() {
      await storm.stop();
      await admin.end().catch(() => undefined);
    },
  };
}

/** A Redis command on a fresh connection (RESP, no client library): the killer must not be a client it kills. */
function redisCommand(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      reply += chunk;
      // A bulk string reply is `$<length>\r\n<data>\r\n`; an integer `:<n>\r\n`; an error `-...\r\n`.
      const bulk = /^\$(\d+)\r\n/.exec(reply);
      if (bulk ? reply.length >= bulk[0].length + Number(bulk[1]) + 2 : reply.endsWith('\r\n')) {
        socket.end();
        if (reply.startsWith('-')) reject(new Error(reply.trim()));
        else resolve(bulk ? reply.slice(bulk[0].length, bulk[0].length + Number(bulk[1])) : reply.slice(1).trim());
      }
    });
    socket.write(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`);
  });
}

/** `CLIENT KILL ID` for every client named `clientName` (`CLIENT SETNAME` / ioredis `connectionName`), every `everyMs`. */
export function killRedisClients(port: number, clientName: string, everyMs: number): Storm {
  return repeat(everyMs, async () => {
    const list = await redisCommand(port, ['CLIENT', 'LIST']);
    const ids = list
      .split('\n')
      .filter((line) => line.includes(` name=${clientName} `))
      .map((line) => /^id=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
    let killed = 0;
    for (const id of ids) killed += Number(await redisCommand(port, ['CLIENT', 'KILL', 'ID', id]).catch(() => '0'));
    return killed;
  });
}

/**
 * Storm servers live on 31200–31299: PostgreSQL on the first 50, redis-server on the rest. Each
 * process starts its search at its own offset, so two files starting servers at once rarely race for one port.
 */
const stormPort = async (first: number) => {
  const offset = (process.pid % 25) * 2;
  return listenablePort(first + offset, 50 - offset).catch(() => listenablePort(first, offset));
};

/** A PostgreSQL cluster of the test's own (initdb in a temp dir), so it may be restarted mid-storm. */
export interface PrivatePostgres {
  readonly url: string;
  /** `pg_ctl restart`: `fast` ends sessions with 57P01, `immediate` is a crash and recovery. */
  restart(mode: 'fast' | 'immediate'): Promise<void>;
  dispose(): Promise<void>;
}

export async function privatePostgres(): Promise<PrivatePostgres> {
  const bin = (await run('pg_config', ['--bindir'])).stdout.trim();
  const port = await stormPort(PRIVATE_PORTS.httpStorms);
  const dir = mkdtempSync(join(tmpdir(), 'oncely-storm-pg-'));
  // PostgreSQL refuses to run as root: as root, its tools run as the `postgres` user.
  const root = process.getuid?.() === 0;
  if (root) {
    const [uid, gid] = await Promise.all(['-u', '-g'].map(async (flag) => Number((await run('id', [flag, 'postgres'])).stdout)));
    chownSync(dir, uid!, gid!);
  }
  const tool = (name: string, args: string[]) =>
    root ? run('runuser', ['-u', 'postgres', '--', join(bin, name), ...args]) : run(join(bin, name), args);
  const data = join(dir, 'data');
  await tool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  await tool('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', 'start']);
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(mode) {
      await tool('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-m', mode, '-w', 'restart']);
    },
    async dispose() {
      if (running) await tool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A redis-server of the test's own, append-only with fsync on every write, so a SIGKILL loses nothing acknowledged. */
export interface PrivateRedis {
  readonly port: number;
  /** SIGKILL, then the same server (port, directory, AOF) started again. */
  killAndRestart(downMs: number): Promise<void>;
  dispose(): Promise<void>;
}

export async function privateRedis(): Promise<PrivateRedis> {
  const port = await stormPort(PRIVATE_PORTS.httpStorms + 50);
  const dir = mkdtempSync(join(tmpdir(), 'oncely-storm-redis-'));
  let child: ChildProcess | undefined;
  const exited = (process: ChildProcess) =>
    new Promise<void>((resolve) => (process.exitCode !== null || process.signalCode !== null ? resolve() : process.once('exit', () => resolve())));
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], {
      stdio: 'ignore',
    });
    for (let tries = 0; ; tries++) {
      if ((await redisCommand(port, ['PING']).catch(() => '')) === 'PONG') return;
      if (tries > 300) throw new Error(`redis-server on ${port} did not start`);
      await sleep(20);
    }
  };
  const kill = async () => {
    if (!child) return;
    const gone = exited(child);
    child.kill('SIGKILL');
    await gone;
  };
  await start();
  return {
    port,
    async killAndRestart(downMs) {
      await kill();
      await sleep(downMs);
      await start();
    },
    async dispose() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An answer and when it arrived (epoch ms). */
export type TimedAnswer = Received & { readonly at: number };

/** Every answer a key got, from every one of its concurrent senders, retries included. */
export interface KeyAnswers {
  readonly key: string;
  readonly answers: TimedAnswer[];
  /** Senders that had no final answer (2xx or another 4xx) by the deadline. */
  readonly unsettled: number;
}

/** What the storm's clients send: `keys` keys, each by `duplicates` concurrent senders that retry 409 and 503 with the same key. */
export interface StormTraffic {
  readonly url: string;
  readonly path: string;
  readonly keys: readonly string[];
  readonly duplicates: number;
  /** Keys in flight at once. */
  readonly concurrency: number;
  /** No sender starts a retry after this instant (epoch ms). */
  readonly deadline: number;
}

const retryable = (status: number) => status === 409 || status === 503;

/** One sender: retries 409 and 503 (and a refused connection) with the same key, after the server's Retry-After at most 200 ms. */
async function sender(traffic: StormTraffic, key: string, answers: TimedAnswer[]): Promise<boolean> {
  for (;;) {
    const answer = await postJson(traffic.url, traffic.path, { key, amount: 100 }, key).catch(() => undefined);
    if (answer) answers.push({ ...answer, at: Date.now() });
    if (answer && !retryable(answer.status)) return true;
    if (Date.now() > traffic.deadline) return false;
    const retryAfter = Number(answer?.headers['retry-after'] ?? 0.05);
    await sleep(Math.min(200, retryAfter * 1_000) * (0.5 + Math.random()));
  }
}

/** How far the storm's traffic is: a fault waits on it instead of on a clock. */
export interface StormProgress {
  /** Resolves once `keys` keys are settled (or the traffic is over). */
  settled(keys: number): Promise<void>;
}

/** The progress of one storm; `keySettled` is called as each key gets its answer, `done` when the traffic ends. */
function stormProgress() {
  let settledKeys = 0;
  const waiting: { readonly keys: number; readonly resolve: () => void }[] = [];
  const wake = (all: boolean) => {
    for (const waiter of waiting.splice(0)) {
      if (all || settledKeys >= waiter.keys) waiter.resolve();
      else waiting.push(waiter);
    }
  };
  return {
    settled: (keys: number) => new Promise<void>((resolve) => {
      waiting.push({ keys, resolve });
      wake(false);
    }),
    keySettled() {
      settledKeys++;
      wake(false);
    },
    done: () => wake(true),
  };
}

/** Sends every key `duplicates` times at once, `concurrency` keys at a time. */
export async function sendStorm(traffic: StormTraffic, onKeySettled: () => void = () => undefined): Promise<KeyAnswers[]> {
  const results: KeyAnswers[] = [];
  let next = 0;
  const lane = async () => {
    while (next < traffic.keys.length) {
      const key = traffic.keys[next++]!;
      const answers: TimedAnswer[] = [];
      const settled = await Promise.all(Array.from({ length: traffic.duplicates }, () => sender(traffic, key, answers)));
      results.push({ key, answers, unsettled: settled.filter((ok) => !ok).length });
      onKeySettled();
    }
  };
  await Promise.all(Array.from({ length: traffic.concurrency }, lane));
  return results;
}

/** The business rows the handlers made: one per execution, named by the key it ran for. */
export interface PaymentRow {
  readonly id: string;
  readonly key: string;
}

/** What a storm produced, as the report and the assertions read it. */
export interface StormVerdict {
  readonly keys: number;
  readonly requests: number;
  readonly statuses: Readonly<Record<string, number>>;
  /** 5xx other than 503. */
  readonly serverErrors: number;
  /** 503s without a Retry-After, or not problem+json. */
  readonly badUnavailable: number;
  /** Rows beyond the first for a key: effects that happened twice. */
  readonly duplicateEffects: number;
  /** 2xx answers whose body names another row than the key's, or a key with no row. */
  readonly wrongAnswers: number;
  /** Keys with no row at all although some sender got a 2xx. */
  readonly missingEffects: number;
  /** Keys no sender settled by the deadline (a lease-mode record left in progress after an unsaved outcome). */
  readonly unsettledKeys: number;
}

/** Reads the verdict: `rows` are every business row, `idOf` reads the row id a 2xx body names. */
export function stormVerdict(results: readonly KeyAnswers[], rows: readonly PaymentRow[], idOf: (answer: Received) => string): StormVerdict {
  const rowsByKey = new Map<string, PaymentRow[]>();
  for (const row of rows) rowsByKey.set(row.key, [...(rowsByKey.get(row.key) ?? []), row]);
  const statuses: Record<string, number> = {};
  let requests = 0;
  let serverErrors = 0;
  let badUnavailable = 0;
  let wrongAnswers = 0;
  let missingEffects = 0;
  for (const { key, answers } of results) {
    const own = rowsByKey.get(key) ?? [];
    for (const answer of answers) {
      requests++;
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      if (answer.status >= 500 && answer.status !== 503) serverErrors++;
      if (answer.status === 503 && (answer.headers['retry-after'] === undefined || answer.headers['content-type'] !== 'application/problem+json')) {
        badUnavailable++;
      }
      if (answer.status >= 200 && answer.status < 300 && (own.length === 0 || idOf(answer) !== own[0]!.id)) wrongAnswers++;
    }
    if (own.length === 0 && answers.some((answer) => answer.status >= 200 && answer.status < 300)) missingEffects++;
  }
  const duplicateEffects = [...rowsByKey.values()].reduce((sum, own) => sum + own.length - 1, 0);
  return {
    keys: results.length,
    requests,
    statuses,
    serverErrors,
    badUnavailable,
    duplicateEffects,
    wrongAnswers,
    missingEffects,
    unsettledKeys: results.filter((result) => result.unsettled > 0).length,
  };
}


/** Creates `"schema".payments`: one row per execution, deliberately without a unique key, so a second execution shows. */
export async function createPayments(db: { query(text: string): Promise<unknown> }, schema: string): Promise<void> {
  await db.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await db.query(`CREATE TABLE "${schema}".payments (id bigserial PRIMARY KEY, key text NOT NULL)`);
}

/** Every payment row, for the verdict. */
export async function paymentRows(db: pg.Pool | pg.Client, schema: string): Promise<PaymentRow[]> {
  return (await db.query<PaymentRow>(`SELECT id::text AS id, key FROM "${schema}".payments`)).rows;
}

/**
 * `POST /payments`: inserts a payment row and answers 201 naming it. In transaction mode the row is
 * written through `tx` (it commits with the claim); in lease mode through `business`, a connection
 * the storm does not touch (the store is what fails), as a service whose effects live elsewhere.
 */
export function paymentsRoute(schema: string, mode: 'transaction' | 'lease', business?: pg.Pool): RouteSpec {
  const insert = `INSERT INTO "${schema}".payments (key) VALUES ($1) RETURNING id::text AS id`;
  return {
    method: 'POST',
    path: '/payments',
    options: { operation: 'payments.storm.v1', mode },
    async handle({ body, context }) {
      const key = String((body as { key?: unknown }).key);
      let id: string;
      if (mode === 'transaction') {
        if (context.kind !== 'transaction') throw new Error(`expected a transaction, got ${context.kind}`);
        const tx = context.tx as { query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }> };
        id = (await tx.query<{ id: string }>(insert, [key])).rows[0]!.id;
      } else {
        id = (await business!.query<{ id: string }>(insert, [key])).rows[0]!.id;
      }
      return { status: 201, headers: { location: `/payments/${id}` }, body: { kind: 'json', value: { id, key } } };
    },
  };
}

/** One storm: a server on `binding`, a fault running for `stormMs` while the traffic goes on. */
export interface StormScenario {
  readonly name: string;
  readonly binding: Binding;
  readonly engine: Idempotency<IdempotencyStore>;
  readonly route: RouteSpec;
  readonly keys: number;
  readonly duplicates: number;
  readonly concurrency: number;
  /** Starts the fault; it is stopped after `stormMs` (or once the traffic is done). */
  readonly fault: (progress: StormProgress) => Promise<Storm>;
  readonly stormMs: number;
  /** How long senders may keep retrying after the storm. */
  readonly settleMs: number;
  readonly rows: () => Promise<PaymentRow[]>;
}

/** The verdict, what would have crashed, what the fault killed, and how long until a 2xx came after the storm. */
export interface StormReport extends StormVerdict {
  readonly name: string;
  readonly crashes: number;
  readonly killed: number;
  readonly recoverMs: number | undefined;
}

/** Runs a storm scenario and reports it (also printed, for the record). */
export async function runStorm(scenario: StormScenario): Promise<StormReport> {
  const crashes = crashCounter();
  try {
    const results = await withServer(scenario.binding, scenario.engine, [scenario.route], async (url) => {
      const progress = stormProgress();
      const fault = await scenario.fault(progress);
      const started = Date.now();
      const traffic = sendStorm(
        {
        url,
        path: scenario.route.path,
        keys: Array.from({ length: scenario.keys }, (_, index) => `${scenario.name}-${index}`),
        duplicates: scenario.duplicates,
        concurrency: scenario.concurrency,
        deadline: started + scenario.stormMs + scenario.settleMs,
        },
        progress.keySettled,
      ).finally(progress.done);
      let stoppedAt = 0;
      const stopFault = Promise.race([sleep(scenario.stormMs), traffic.then(() => undefined)]).then(async () => {
        await fault.stop();
        stoppedAt = Date.now();
      });
      const [answers] = await Promise.all([traffic, stopFault]);
      return { answers, killed: fault.count(), stoppedAt };
    });
    const verdict = stormVerdict(results.answers, await scenario.rows(), (answer) => String((answer.json() as { id?: unknown }).id));
    const firstSuccess = results.answers
      .flatMap((key) => key.answers)
      .filter((answer) => answer.status >= 200 && answer.status < 300 && answer.at >= results.stoppedAt)
      .reduce((first, answer) => Math.min(first, answer.at), Number.POSITIVE_INFINITY);
    const report: StormReport = {
      name: scenario.name,
      ...verdict,
      crashes: crashes.errors.length,
      killed: results.killed,
      recoverMs: Number.isFinite(firstSuccess) ? firstSuccess - results.stoppedAt : undefined,
    };
    console.info(`storm ${JSON.stringify(report)}`);
    if (crashes.errors.length > 0) console.error('storm crashes', crashes.errors.slice(0, 3));
    return report;
  } finally {
    crashes.stop();
  }
}

/** The assertions every storm makes: nothing crashed, no 5xx but 503 (with Retry-After), one effect per key, and every 2xx names it. */
export function expectClean(report: StormReport): void {
  expect(report.crashes, 'uncaught errors').toBe(0);
  expect(report.serverErrors, '5xx other than 503').toBe(0);
  expect(report.badUnavailable, '503 without Retry-After or problem+json').toBe(0);
  expect(report.duplicateEffects, 'effects applied twice').toBe(0);
  expect(report.wrongAnswers, '2xx naming another row than the key’s').toBe(0);
  expect(report.missingEffects, '2xx without an effect').toBe(0);
}

/** Pools and schemas a storm file opens, closed and dropped (last first) by `dispose`. */
export function stormResources() {
  const cleanups: (() => Promise<unknown>)[] = [];
  const resources = {
    /** A pool whose backends carry `applicationName`, with the pool-level listener every pg.Pool needs. */
    pool(url: string, applicationName: string, options: pg.PoolConfig = {}): pg.Pool {
      const pool = new pg.Pool({ connectionString: url, application_name: applicationName, max: 8, connectionTimeoutMillis: 2_000, ...options });
      pool.on('error', () => undefined);
      cleanups.push(() => pool.end());
      return pool;
    },
    /** A pool on the shared server the storm never touches, holding `"schema".payments` (lease mode's effects). */
    async business(schema: string): Promise<pg.Pool> {
      const business = resources.pool(DATABASE_URL, runName('oncely_business'));
      await createPayments(business, schema);
      resources.defer(() => business.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      return business;
    },
    defer(cleanup: () => Promise<unknown>): void {
      cleanups.push(cleanup);
    },
    async dispose(): Promise<void> {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    },
  };
  return resources;
}
