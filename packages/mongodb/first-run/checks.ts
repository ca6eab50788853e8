import { setTimeout as sleep } from 'node:timers/promises';
import { createIdempotency, isOncelyError } from '@oncely/core';
import { type CommandStartedEvent, type Document, MongoClient } from 'mongodb';
import { deploymentFromHello, encodeScopeId, type MongoDeployment, mongoOutbox, mongoStore, mongoTransactionalStore } from '../src/index.js';
import {
  AGGREGATE_INDEXES,
  type AggregateDocument,
  aggregateKey,
  leaseAggregateCommand,
  listAggregateCommand,
  OUTBOX_INDEXES,
  type OutboxDocument,
  pendingEventsPipeline,
} from '../src/outbox/outbox-queries.js';
import { claimRecord } from '../src/store/mongo-store.js';
import { claimCommand, purgeCandidates, TTL_INDEX } from '../src/store/queries.js';
import type { IdempotencyDocument } from '../src/store/record-document.js';
import { boundedAbove, keysExamined, planStages, readsById } from './explain.js';

// The checks a first run against a real deployment makes before the suites: each one proves a claim
// the unit tests can only make about the commands we send (mingo and scripted servers are not
// MongoDB). Every check works in its own database, which is dropped afterwards.

/** How a check ended: `not_run` when the deployment cannot run it (say why). */
export type CheckStatus = 'passed' | 'failed' | 'not_run';

/** One check's outcome, as the report prints it. */
export interface CheckResult {
  readonly id: string;
  readonly title: string;
  readonly status: CheckStatus;
  readonly details: readonly string[];
}

/** What a check gets: where to connect and what the server said it is. */
export interface CheckContext {
  readonly url: string;
  readonly deployment: MongoDeployment;
  /** A client of the check's own, recording every command it starts. */
  connect(query?: string): Promise<{ client: MongoClient; started: CommandStartedEvent[] }>;
  /** A database only this check uses. */
  readonly dbName: string;
  /** The application name failpoints are restricted to. */
  readonly appName: string;
}

/** A check: its id and title, and the run that proves it. */
export interface Check {
  readonly id: string;
  readonly title: string;
  run(context: CheckContext): Promise<Omit<CheckResult, 'id' | 'title'>>;
}

const passed = (...details: string[]) => ({ status: 'passed' as const, details });
const failed = (...details: string[]) => ({ status: 'failed' as const, details });
const notRun = (...details: string[]) => ({ status: 'not_run' as const, details });

const scopeOf = (key: string) => ({ tenant: 'first-run', principal: 'check', operation: 'payments.create.v1', key });
const NO_TEST_COMMANDS = 'the server refuses configureFailPoint: start mongod (and mongos) with --setParameter enableTestCommands=1';

/** Appends `query` to a connection string that may already carry options. */
export function withQuery(url: string, query: string): string {
  if (!query) return url;
  const [base, existing] = url.split('?', 2) as [string, string | undefined];
  const path = /^mongodb(\+srv)?:\/\/[^/]+$/.test(base) ? `${base}/` : base;
  return `${path}?${existing ? `${existing}&` : ''}${query}`;
}

/** Turns a failpoint on for this run's application only, runs `body`, and always turns it off. */
async function withFailPoint<T>(client: MongoClient, data: Document, times: number, body: () => Promise<T>): Promise<T | 'unsupported'> {
  try {
    await client.db('admin').command({ configureFailPoint: 'failCommand', mode: { times }, data });
  } catch (error) {
    if ((error as { code?: unknown }).code === 59 || /no such (cmd|command)/i.test(String(error))) return 'unsupported';
    throw error;
  }
  try {
    return await body();
  } finally {
    await client.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' });
  }
}

/**
 * Failpoint data for a command that applies and then answers with a write concern error the driver
 * retries (ShutdownInProgress with RetryableWriteError): the reply of a write that landed is lost.
 */
const replyLostAfter = (command: string, appName: string): Document => ({
  failCommands: [command],
  appName,
  errorLabels: ['RetryableWriteError'],
  writeConcernError: { code: 91, errmsg: 'Replication is being shut down' },
});

const commandsNamed = (started: CommandStartedEvent[], ...names: string[]) => started.filter((event) => names.includes(event.commandName));

/** The deployment, as every check reads it. */
export const deploymentCheck: Check = {
  id: 'deployment',
  title: 'Server version and topology',
  async run({ connect }) {
    const { client } = await connect();
    const admin = client.db('admin');
    const [hello, build] = await Promise.all([admin.command({ hello: 1 }), admin.command({ buildInfo: 1 })]);
    const deployment = deploymentFromHello(hello);
    const details = [`MongoDB ${build.version}`, `topology: ${deployment.kind}${deployment.kind === 'replica_set' ? ` (${deployment.setName}, ${hello.hosts?.length ?? 1} members)` : ''}`];
    const [major] = String(build.version).split('.').map(Number);
    if ((major ?? 0) < 5) details.push('before 5.0 purgeExpired walks the whole expiresAt index (no $expr index bounds) and the claim relies on the store retrying E11000');
    return passed(...details);
  },
};

/** Expired records read as absent while the TTL monitor is off, and a claim then starts afresh. */
export const expiredReadsAbsentCheck: Check = {
  id: 'ttl-expired-absent',
  title: 'With the TTL monitor off, an expired record that is still stored reads as absent and is claimed afresh',
  async run({ connect, dbName, deployment }) {
    if (deployment.kind === 'sharded') return notRun('the TTL monitor runs on each shard: run this check with MONGODB_URL set to a shard replica set');
    const { client } = await connect();
    const admin = client.db('admin');
    try {
      await admin.command({ setParameter: 1, ttlMonitorEnabled: false });
    } catch (error) {
      return notRun(`setParameter ttlMonitorEnabled refused (${(error as Error).message}); run as a user with the setParameter privilege`);
    }
    try {
      const store = mongoStore({ client, dbName, collectionName: 'ttl_off' });
      await store.ensureIndexes();
      const scope = scopeOf('expired');
      await store.claim({ scope, fingerprint: 'f', token: 'first', leaseMs: 500, retentionMs: 1_000 });
      await store.complete({ scope, token: 'first', state: 'succeeded', response: { status: 201 }, retentionMs: 1_000 });
      await sleep(1_500);
      const raw = await store.collection.findOne({ _id: encodeScopeId(scope) });
      if (!raw) return failed('the expired record was deleted although the TTL monitor was off');
      const read = await store.get(scope);
      const again = await store.claim({ scope, fingerprint: 'f', token: 'second', leaseMs: 500, retentionMs: 60_000 });
      const details = [`raw record still stored (state ${raw.state}, expiresAt ${raw.expiresAt.toISOString()})`, `get: ${read === undefined ? 'absent' : 'PRESENT'}`, `claim: ${JSON.stringify(again)}`];
      const fresh = again.kind === 'claimed' && again.fence === 1 && !again.takeover;
      return read === undefined && fresh ? passed(...details) : failed(...details);
    } finally {
      await admin.command({ setParameter: 1, ttlMonitorEnabled: true });
    }
  },
};

/** The claim's plan reads one document by `_id`. */
export const claimExplainCheck: Check = {
  id: 'claim-explain',
  title: 'The claim reads one document by _id (IDHACK before 8.0, EXPRESS from 8.0), never a collection scan',
  async run({ connect, dbName, deployment }) {
    const { client } = await connect();
    const db = client.db(dbName);
    const name = 'claim_explain';
    const details: string[] = [];
    if (deployment.kind === 'sharded') {
      try {
        // enableSharding is needed before 6.0 and harmless after.
        await client.db('admin').command({ enableSharding: dbName }).catch(() => undefined);
        await client.db('admin').command({ shardCollection: `${dbName}.${name}`, key: { _id: 'hashed' } });
        details.push('collection sharded on { _id: "hashed" }');
      } catch (error) {
        details.push(`could not shard the collection (${(error as Error).message}); explaining it unsharded`);
      }
    }
    await db.collection(name).createIndex(TTL_INDEX.key, TTL_INDEX.options);
    const { filter, update, options } = claimCommand({ scope: scopeOf('explain'), fingerprint: 'f', token: 't', leaseMs: 1_000, retentionMs: 60_000 });
    const explain = await db.command({
      explain: { findAndModify: name, query: filter, update, upsert: true, new: true, fields: options.projection },
      verbosity: 'queryPlanner',
    });
    const stages = planStages(explain);
    details.push(`plan stages: ${stages.map((stage) => stage.stage).join(' > ')}`);
    const scans = stages.some((stage) => stage.stage === 'COLLSCAN');
    if (deployment.kind === 'sharded') {
      const top = (explain.queryPlanner as Document | undefined)?.winningPlan?.stage;
      details.push(`router plan: ${top}`);
    }
    return readsById(stages) && !scans ? passed(...details) : failed(...details);
  },
};

/** The purge's plan scans the TTL index from the oldest record and stops at now. */
export const purgeExplainCheck: Check = {
  id: 'purge-explain',
  title: 'purgeExpired scans the expiresAt index only up to now (IXSCAN with an upper bound; keys examined follow the expired records, not the live ones)',
  async run({ connect, dbName }) {
    const { client } = await connect();
    const collection = client.db(dbName).collection<IdempotencyDocument>('purge_explain');
    await collection.createIndex(TTL_INDEX.key, TTL_INDEX.options);
    const now = Date.now();
    const live = 300;
    const expired = 5;
    const record = (i: number, expiresAt: number): IdempotencyDocument => ({
      _id: encodeScopeId(scopeOf(`purge-${i}`)),
      fingerprint: 'f',
      state: 'succeeded',
      fence: 1,
      response: '{"status":201}',
      createdAt: new Date(now - 120_000),
      expiresAt: new Date(expiresAt),
    });
    await collection.insertMany([
      ...Array.from({ length: live }, (_, i) => record(i, now + 3_600_000)),
      ...Array.from({ length: expired }, (_, i) => record(live + i, now - 60_000)),
    ]);
    const { filter, options } = purgeCandidates(100);
    const explain = await collection.find(filter, options).explain('executionStats');
    const scan = planStages(explain).find((stage) => stage.stage === 'IXSCAN' && stage.indexName === TTL_INDEX.options.name);
    const keys = keysExamined(explain);
    // The filter this adapter used before: `$not` of "still running", which leaves the scan unbounded.
    const before = await collection.find({ $expr: { $not: [{ $gt: ['$expiresAt', '$$NOW'] }] } }, options).explain('executionStats');
    const details = [
      `${live} live and ${expired} expired records`,
      `index scan: ${scan ? `${scan.indexName}, bounds ${JSON.stringify(scan.indexBounds)}` : 'NONE'}`,
      `keys examined: ${keys} (the former $not filter: ${keysExamined(before)})`,
    ];
    const bounded = scan !== undefined && boundedAbove(scan, 'expiresAt') && keys !== undefined && keys <= expired + 2;
    return bounded ? passed(...details) : failed(...details);
  },
};

/** The outbox claim reads what it takes: one aggregate down its index, then that aggregate's next events. */
export const outboxClaimExplainCheck: Check = {
  id: 'outbox-claim-explain',
  title:
    "The outbox claim leases an aggregate down the (claimableAt, order) index and reads its next events down (publishedAt, aggregate, seq): IXSCAN, no COLLSCAN, keys examined follow the batch, not the backlog; enqueue's listing of a listed aggregate writes nothing",
  async run({ connect, dbName }) {
    const { client } = await connect();
    const db = client.db(dbName);
    const outbox = mongoOutbox({ db, collectionName: 'outbox_explain', sequencesCollectionName: 'outbox_explain_sequences', aggregatesCollectionName: 'outbox_explain_aggregates' });
    await outbox.ensureIndexes();
    const now = Date.now();
    const held = 500;
    const ready = 3;
    const aggregates = db.collection<AggregateDocument>('outbox_explain_aggregates');
    await aggregates.insertMany([
      ...Array.from({ length: held }, (_, i) => ({ _id: aggregateKey('order', `held-${i}`), aggregateType: 'order', aggregateId: `held-${i}`, claimableAt: new Date(now + 3_600_000), order: i, leaseOwner: 'other' })),
      ...Array.from({ length: ready }, (_, i) => ({ _id: aggregateKey('order', `ready-${i}`), aggregateType: 'order', aggregateId: `ready-${i}`, claimableAt: new Date(now - 60_000), order: held + i })),
    ]);
    const published = 400;
    const pending = 200;
    const limit = 10;
    const event = (aggregateSeq: number, publishedAt: Date | null): OutboxDocument => ({
      _id: `ready-0-${aggregateSeq}`, aggregateType: 'order', aggregateId: 'ready-0', aggregateSeq, eventType: 'e', payload: '{}',
      createdAt: new Date(now - 120_000), publishedAt, deadLetteredAt: null, attempts: 0, availableAt: new Date(now - 120_000),
    });
    // Two unpublished events for each held aggregate: a backlog the claim must not read.
    const backlog = Array.from({ length: held * 2 }, (_, i): OutboxDocument => ({ ...event(0, null), _id: `held-${i}`, aggregateId: `held-${i % held}`, aggregateSeq: 1 + Math.floor(i / held) }));
    await outbox.collection.insertMany([
      ...Array.from({ length: published }, (_, i) => event(i + 1, new Date(now - 60_000))),
      ...Array.from({ length: pending }, (_, i) => event(published + i + 1, null)),
      ...backlog,
    ]);

    const lease = leaseAggregateCommand('explain', 1_000);
    const leaseExplain = await db.command({
      explain: { findAndModify: aggregates.collectionName, query: lease.filter, sort: lease.options.sort, update: lease.update, new: true },
      verbosity: 'executionStats',
    });
    const leaseScan = planStages(leaseExplain).find((stage) => stage.stage === 'IXSCAN' && stage.indexName === AGGREGATE_INDEXES[0].options.name);
    const leaseKeys = keysExamined(leaseExplain);
    const eventsExplain = await db.command({
      explain: { aggregate: outbox.collection.collectionName, pipeline: pendingEventsPipeline('order', 'ready-0', limit), cursor: {} },
      verbosity: 'executionStats',
    });
    const eventStages = planStages(eventsExplain);
    const eventScan = eventStages.find((stage) => stage.stage === 'IXSCAN' && stage.indexName === OUTBOX_INDEXES[1].options.name);
    const eventKeys = keysExamined(eventsExplain);
    // The listing an enqueue writes in its transaction, on an aggregate a relay holds: it must not write.
    const listed = listAggregateCommand('order', 'held-0', 999_999);
    const noop = await aggregates.updateOne(listed.filter, listed.update, listed.options);
    const scans = [...planStages(leaseExplain), ...eventStages].some((stage) => stage.stage === 'COLLSCAN' || stage.stage === 'SORT');
    const details = [
      `${held} held and ${ready} ready aggregates; one aggregate with ${published} published and ${pending} pending events, ${backlog.length} events of other aggregates`,
      `lease: ${leaseScan ? `IXSCAN ${leaseScan.indexName}, bounds ${JSON.stringify(leaseScan.indexBounds)}` : 'NO IXSCAN on the claimable index'}, keys examined ${leaseKeys}`,
      `events (limit ${limit}): ${eventScan ? `IXSCAN ${eventScan.indexName}` : 'NO IXSCAN on the unpublished index'}, stages ${eventStages.map((stage) => stage.stage).join(' > ')}, keys examined ${eventKeys}`,
      `enqueue's listing of a held aggregate: matched ${noop.matchedCount}, modified ${noop.modifiedCount}`,
    ];
    const bounded =
      leaseScan !== undefined && leaseKeys !== undefined && leaseKeys <= 2 &&
      eventScan !== undefined && eventKeys !== undefined && eventKeys <= limit + 1 &&
      !scans && noop.matchedCount === 1 && noop.modifiedCount === 0;
    return bounded ? passed(...details) : failed(...details);
  },
};

/** A takeover whose reply is lost and which the driver retries moves the fence once. */
export const retriedClaimCheck: Check = {
  id: 'retried-claim',
  title: 'A takeover that lands, loses its reply (writeConcernError) and is retried by the driver moves the fence exactly once',
  async run({ connect, dbName, appName, deployment }) {
    const { client, started } = await connect();
    const collection = client.db(dbName).collection<IdempotencyDocument>('retried_claim');
    const scope = scopeOf('retried');
    const write = { writeConcern: { w: 'majority' as const } };
    const first = await claimRecord(collection, { scope, fingerprint: 'f', token: 'first', leaseMs: 300, retentionMs: 60_000 }, write);
    await sleep(600);
    const sentBefore = commandsNamed(started, 'findAndModify').length;
    const takeover = await withFailPoint(client, replyLostAfter('findAndModify', appName), 1, () =>
      claimRecord(collection, { scope, fingerprint: 'f', token: 'second', leaseMs: 30_000, retentionMs: 60_000 }, write),
    );
    if (takeover === 'unsupported') return notRun(NO_TEST_COMMANDS);
    const sent = commandsNamed(started, 'findAndModify').length - sentBefore;
    const stored = await collection.findOne({ _id: encodeScopeId(scope) });
    const details = [
      `first claim: ${JSON.stringify(first)}`,
      `takeover: ${JSON.stringify(takeover)}, findAndModify sent ${sent} times`,
      `stored: fence ${stored?.fence}, token ${stored?.token}`,
      deployment.kind === 'sharded' ? 'through mongos' : 'on the replica set',
    ];
    const once = takeover.kind === 'claimed' && takeover.fence === 2 && takeover.takeover && sent === 2 && stored?.fence === 2 && stored.token === 'second';
    return once ? passed(...details) : failed(...details);
  },
};

/** A commit answered with UnknownTransactionCommitResult is committed again, and lands once. */
export const unknownCommitCheck: Check = {
  id: 'unknown-commit',
  title: 'A commit that returns UnknownTransactionCommitResult is committed again: the handler ran once and one payment exists',
  async run({ connect, dbName, appName, deployment }) {
    if (deployment.kind === 'standalone') return notRun('a standalone runs no transactions');
    const { client, started } = await connect();
    const db = client.db(dbName);
    await db.createCollection('payments');
    const store = await mongoTransactionalStore({ client, dbName, collectionName: 'unknown_commit' });
    await store.ensureIndexes();
    const engine = createIdempotency({ store });
    const key = `commit-${Date.now()}`;
    let executions = 0;
    // Twice: the driver retries a commit once by itself, so the store sees the label on the second answer.
    const result = await withFailPoint(client, replyLostAfter('commitTransaction', appName), 2, () =>
      engine.runInTransaction({ ...scopeOf(key), request: { amount: '10.00' } }, async ({ tx }) => {
        executions++;
        await db.collection('payments').insertOne({ key }, { session: tx });
        return { status: 201 };
      }),
    );
    if (result === 'unsupported') return notRun(NO_TEST_COMMANDS);
    const commits = commandsNamed(started, 'commitTransaction').length;
    const payments = await db.collection('payments').countDocuments({ key });
    const record = await store.collection.findOne({ _id: encodeScopeId(scopeOf(key)) });
    const details = [`result: ${result.kind}`, `handler ran ${executions} time(s)`, `commitTransaction sent ${commits} times`, `payments: ${payments}`, `record: ${record?.state}`];
    const once = result.kind === 'executed' && executions === 1 && commits >= 3 && payments === 1 && record?.state === 'succeeded';
    return once ? passed(...details) : failed(...details);
  },
};

/** Every lease-mode write carries the store's write concern. */
export const writeConcernCheck: Check = {
  id: 'write-concern',
  title: 'Every lease-mode write carries { w: "majority" } by default and { w: 1 } when the store is given it',
  async run({ connect, dbName, deployment }) {
    if (deployment.kind === 'sharded') return notRun('lease mode is refused behind mongos (see mongos-refusal)');
    const details: string[] = [];
    let ok = true;
    for (const [label, writeConcern, expected] of [
      ['default', undefined, 'majority'],
      ['{ w: 1 }', { w: 1 as const }, 1],
    ] as const) {
      const { client, started } = await connect('w=1');
      const store = mongoStore({ client, dbName, collectionName: `write_concern_${expected}`, writeConcern });
      const engine = createIdempotency({ store });
      const request = { ...scopeOf(`wc-${expected}`), request: {} };
      await engine.run(request, async (context) => {
        await context.extendLease();
        return { status: 201 };
      });
      await engine.run({ ...request, key: `wc-${expected}-release` }, async () => ({ status: 503 }));
      const writes = commandsNamed(started, 'findAndModify', 'update', 'delete');
      const carried = writes.map((event) => (event.command.writeConcern as Document | undefined)?.w);
      details.push(`${label}: ${writes.length} writes with w = ${JSON.stringify(carried)}`);
      ok &&= writes.length === 5 && carried.every((w) => w === expected);
    }
    return ok ? passed(...details) : failed(...details);
  },
};

/** `get` reads the primary on a client that prefers secondaries. */
export const primaryReadCheck: Check = {
  id: 'primary-reads',
  title: 'get reads the primary on a readPreference=secondaryPreferred client',
  async run({ connect, dbName, deployment }) {
    const { client, started } = await connect('readPreference=secondaryPreferred');
    const hello = await client.db('admin').command({ hello: 1 });
    const store = deployment.kind === 'sharded' ? await mongoTransactionalStore({ client, dbName }) : mongoStore({ client, dbName });
    // Give the driver time to discover the secondaries, so the preference has somewhere else to go.
    await sleep(1_000);
    await store.get(scopeOf('read'));
    const [read] = commandsNamed(started, 'find').slice(-1);
    if (!read) return failed('no find was sent');
    if (deployment.kind === 'sharded') {
      const preference = read.command.$readPreference as Document | undefined;
      const details = [`find sent to the router with $readPreference ${JSON.stringify(preference ?? 'none (primary)')}`];
      return !preference || preference.mode === 'primary' ? passed(...details) : failed(...details);
    }
    const members = (hello.hosts as string[] | undefined)?.length ?? 1;
    const details = [`find sent to ${read.address}; primary is ${hello.primary ?? 'this server'}`];
    if (members < 2) details.push('a single-member set: there is no secondary the read could have gone to');
    return !hello.primary || read.address === hello.primary ? passed(...details) : failed(...details);
  },
};

/** Behind mongos lease mode is refused before anything is written. */
export const mongosRefusalCheck: Check = {
  id: 'mongos-refusal',
  title: 'Behind mongos lease mode is refused with capability_missing before anything is written',
  async run({ connect, dbName, deployment }) {
    if (deployment.kind !== 'sharded') return notRun('not a mongos');
    const { client, started } = await connect();
    const store = mongoStore({ client, dbName, collectionName: 'refused' });
    const claim = await store.claim({ scope: scopeOf('refused'), fingerprint: 'f', token: 't', leaseMs: 1_000, retentionMs: 60_000 }).catch((error: unknown) => error);
    const indexes = await store.ensureIndexes().catch((error: unknown) => error);
    const writes = commandsNamed(started, 'findAndModify', 'createIndexes').length;
    const details = [`claim: ${(claim as Error).message?.slice(0, 80)}…`, `ensureIndexes: ${isOncelyError(indexes) ? indexes.code : String(indexes)}`, `writes sent: ${writes}`];
    return isOncelyError(claim, 'capability_missing') && isOncelyError(indexes, 'capability_missing') && writes === 0 ? passed(...details) : failed(...details);
  },
};

/** A collection with a case-insensitive default collation is refused. */
export const collationCheck: Check = {
  id: 'collation-refusal',
  title: 'A collection with a case-insensitive default collation is refused with invalid_option',
  async run({ connect, dbName, deployment }) {
    const { client } = await connect();
    await client.db(dbName).createCollection('case_insensitive', { collation: { locale: 'en', strength: 2 } });
    const refusal =
      deployment.kind === 'replica_set' || deployment.kind === 'sharded'
        ? await mongoTransactionalStore({ client, dbName, collectionName: 'case_insensitive' }).catch((error: unknown) => error)
        : await mongoStore({ client, dbName, collectionName: 'case_insensitive' }).ensureIndexes().catch((error: unknown) => error);
    const details = [isOncelyError(refusal) ? `${refusal.code}: ${refusal.message.slice(0, 100)}…` : `not refused: ${refusal instanceof Error ? refusal.message : 'the store accepted the collection'}`];
    return isOncelyError(refusal, 'invalid_option') ? passed(...details) : failed(...details);
  },
};

/** Every check, in the order a first run makes them. */
export const CHECKS: readonly Check[] = [
  deploymentCheck,
  expiredReadsAbsentCheck,
  claimExplainCheck,
  purgeExplainCheck,
  outboxClaimExplainCheck,
  retriedClaimCheck,
  unknownCommitCheck,
  writeConcernCheck,
  primaryReadCheck,
  mongosRefusalCheck,
  collationCheck,
];

/** Runs `checks` against `url`, each in a database of its own, and reports every outcome (a throw is a failure). */
export async function runChecks(url: string, checks: readonly Check[] = CHECKS): Promise<{ deployment: MongoDeployment; results: CheckResult[] }> {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const appName = `oncely-first-run-${run}`;
  const opened: MongoClient[] = [];
  const probe = await new MongoClient(url).connect();
  opened.push(probe);
  const deployment = deploymentFromHello(await probe.db('admin').command({ hello: 1 }));
  const results: CheckResult[] = [];
  try {
    for (const check of checks) {
      const dbName = `oncely_first_run_${run}_${check.id.replace(/-/g, '_')}`;
      const context: CheckContext = {
        url,
        deployment,
        dbName,
        appName,
        async connect(query = '') {
          const client = new MongoClient(withQuery(url, query), { appName, monitorCommands: true });
          const started: CommandStartedEvent[] = [];
          client.on('commandStarted', (event) => started.push(event));
          opened.push(await client.connect());
          return { client, started };
        },
      };
      try {
        results.push({ id: check.id, title: check.title, ...(await check.run(context)) });
      } catch (error) {
        results.push({ id: check.id, title: check.title, status: 'failed', details: [`threw: ${(error as Error).stack ?? String(error)}`] });
      } finally {
        await probe.db(dbName).dropDatabase().catch(() => undefined);
      }
    }
  } finally {
    await Promise.all(opened.map((client) => client.close()));
  }
  return { deployment, results };
}
