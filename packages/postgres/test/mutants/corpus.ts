import type { IdempotencyRecord } from '@oncely/core';
import type { ClaimInput, FenceResult, TransactionDecision } from '@oncely/core/adapter';
import type { PostgresStore, PostgresTx } from '../../src/index.js';
import type { MutatedPool, SqlMutation } from './mutated-pool.js';

/** What a JS-level mutant gets: the real store over the pool, the pool, and the store's table. */
export interface Base {
  readonly store: PostgresStore;
  readonly db: MutatedPool;
}

/** One bug: an edit of the real SQL, or a wrapping of the real store; and the clause whose test must catch it. */
export interface Mutant {
  readonly bug: string;
  readonly clause: string;
  readonly sql?: readonly SqlMutation[];
  readonly wrap?: (base: Base) => PostgresStore;
}

const scopeParams = (input: { scope: ClaimInput['scope'] }) => [input.scope.tenant, input.scope.principal, input.scope.operation, input.scope.key];
const byScope = 'tenant = $1 AND principal = $2 AND operation = $3 AND idempotency_key = $4';
const ms = (param: string) => `statement_timestamp() + ${param}::float8 * interval '1 millisecond'`;
const leaseCheck = '\n    AND lease_expires_at > statement_timestamp()';
const DAY = 86_400_000;

/** The store with some members replaced; everything else reaches the real store. */
const replacing = (store: PostgresStore, members: Partial<PostgresStore>): PostgresStore => Object.assign(Object.create(store) as PostgresStore, members);

/** The holder check done as a read, so the write after it decides on a stale answer. */
async function holds(db: MutatedPool, table: string, input: { scope: ClaimInput['scope']; token: string }) {
  const { rows } = await db.query(
    `SELECT 1 FROM ${table} WHERE ${byScope} AND state = 'in_progress' AND lease_token = $5 AND lease_expires_at > statement_timestamp() AND expires_at > statement_timestamp()`,
    [...scopeParams(input), input.token],
  );
  return rows.length === 1;
}

/** Every PostgreSQL mutant, one bug each. */
export const corpus: readonly Mutant[] = [
  {
    bug: 'check-then-insert (cold pool)',
    clause: 'store.claim.atomic',
    // Reads, and when it saw nothing, upserts over whatever a concurrent claim wrote meanwhile.
    wrap: ({ store, db }) =>
      replacing(store, {
        async claim(input) {
          if (await store.get(input.scope)) return store.claim(input);
          await db.query(
            `INSERT INTO ${store.table} (tenant, principal, operation, idempotency_key, fingerprint, state, lease_token, lease_expires_at, fence, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, 'in_progress', $6, ${ms('$7')}, 1, statement_timestamp(), ${ms('$8')})
             ON CONFLICT (tenant, principal, operation, idempotency_key) DO UPDATE SET
               fingerprint = EXCLUDED.fingerprint, state = 'in_progress', lease_token = EXCLUDED.lease_token,
               lease_expires_at = EXCLUDED.lease_expires_at, fence = 1, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
               response_status = NULL, response_headers = NULL, response_body = NULL, body_omitted = false, resource_id = NULL`,
            [...scopeParams(input), input.fingerprint, input.token, input.leaseMs, input.retentionMs],
          );
          return { kind: 'claimed', fence: 1, takeover: false };
        },
      }),
  },
  {
    bug: 'read-then-update takeover',
    clause: 'store.claim.takeover-atomic',
    wrap: ({ store, db }) =>
      replacing(store, {
        async claim(input) {
          const record: IdempotencyRecord | undefined = await store.get(input.scope);
          if (record?.state !== 'in_progress' || record.leaseRemainingMs !== 0 || record.fingerprint !== input.fingerprint) return store.claim(input);
          await db.query(`UPDATE ${store.table} SET lease_token = $5, fence = $6, lease_expires_at = ${ms('$7')}, expires_at = ${ms('$8')} WHERE ${byScope}`, [
            ...scopeParams(input),
            input.token,
            record.fence + 1,
            input.leaseMs,
            input.retentionMs,
          ]);
          return { kind: 'claimed', fence: record.fence + 1, takeover: true };
        },
      }),
  },
  { bug: 'same fence on takeover', clause: 'store.claim.takeover', sql: [{ statement: 'claim', from: 'ELSE fence + 1 END', to: 'ELSE fence END' }] },
  {
    bug: 'takeover reported as a fresh claim',
    clause: 'store.claim.takeover',
    wrap: ({ store }) => replacing(store, { claim: async (input) => ({ ...(await store.claim(input)), takeover: false }) as Awaited<ReturnType<PostgresStore['claim']>> }),
  },
  {
    bug: 'takeover keeps the old retention',
    clause: 'store.claim.takeover-retention',
    sql: [{ statement: 'claim', from: `expires_at = ${ms('$8')},`, to: `expires_at = CASE WHEN expires_at <= statement_timestamp() THEN ${ms('$8')} ELSE expires_at END,` }],
  },
  { bug: 'takeover resets createdAt', clause: 'store.claim.takeover-created-at', sql: [{ statement: 'claim', from: 'ELSE created_at END', to: 'ELSE statement_timestamp() END' }] },
  { bug: 'takeover by any fingerprint', clause: 'store.claim.takeover-fingerprint', sql: [{ statement: 'claim', from: ' AND fingerprint = $5))', to: '))', occurrences: 2 }] },
  {
    bug: 'takeover of a running lease',
    clause: 'store.claim.held',
    sql: [{ statement: 'claim', from: 'lease_expires_at <= statement_timestamp() AND fingerprint = $5', to: 'fingerprint = $5', occurrences: 2 }],
  },
  { bug: 'lease in seconds', clause: 'store.claim.absent', sql: [{ statement: 'claim', from: "$7::float8 * interval '1 millisecond'", to: "$7::float8 * interval '1 second'", occurrences: 2 }] },
  {
    bug: 'an expired record keeps its fence',
    clause: 'store.claim.expired',
    sql: [{ statement: 'claim', from: 'fence = CASE WHEN expires_at <= statement_timestamp() THEN 1 ELSE fence + 1 END', to: 'fence = fence + 1' }],
  },
  { bug: 'get reads expired records', clause: 'store.get.expired', sql: [{ statement: 'get', from: ' AND expires_at > statement_timestamp()', to: '' }] },
  { bug: 'scope without the principal', clause: 'store.scope.isolation', sql: [{ statement: 'every', from: 'principal = $2', to: '$2::text IS NOT NULL' }] },
  { bug: 'complete ignores the token', clause: 'store.complete.token', sql: [{ statement: 'complete', from: 'lease_token = $5', to: '$5::text IS NOT NULL' }] },
  { bug: 'complete by a lapsed owner', clause: 'store.complete.lapsed', sql: [{ statement: 'complete', from: leaseCheck, to: '' }] },
  {
    bug: 'complete ignores its retentionMs',
    clause: 'store.complete.retention',
    sql: [{ statement: 'complete', from: `expires_at = ${ms('$12')}`, to: "expires_at = expires_at + 0 * $12::float8 * interval '1 millisecond'" }],
  },
  {
    bug: 'complete overwrites an outcome',
    clause: 'store.complete.final',
    // The token stays on the outcome and no longer needs an in-progress record: its owner can write again.
    sql: [
      { statement: 'complete', from: 'lease_token = NULL, lease_expires_at = NULL', to: 'lease_expires_at = NULL' },
      { statement: 'complete', from: `state = 'in_progress' AND lease_token = $5${leaseCheck}`, to: "lease_token = $5\n    AND coalesce(lease_expires_at, 'infinity') > statement_timestamp()" },
    ],
  },
  {
    bug: 'complete drops the resource id',
    clause: 'store.complete.holder',
    wrap: ({ store }) => replacing(store, { complete: (input) => store.complete({ ...input, response: { ...input.response, resourceId: undefined } }) }),
  },
  { bug: 'release by anyone', clause: 'store.release.token', sql: [{ statement: 'release', from: 'lease_token = $5', to: '$5::text IS NOT NULL' }] },
  { bug: 'release by a lapsed owner', clause: 'store.release.lapsed', sql: [{ statement: 'release', from: leaseCheck, to: '' }] },
  { bug: 'release lapses the lease instead of deleting', clause: 'store.release.holder', sql: [{ statement: 'release', from: /^DELETE FROM (\S+) WHERE/, to: 'UPDATE $1 SET lease_expires_at = statement_timestamp() WHERE' }] },
  { bug: 'extend ignores the token', clause: 'store.extend.token', sql: [{ statement: 'extend', from: 'lease_token = $5', to: '$5::text IS NOT NULL' }] },
  { bug: 'extend by a lapsed owner', clause: 'store.extend.lapsed', sql: [{ statement: 'extend', from: leaseCheck, to: '' }] },
  { bug: 'extend does not carry retention', clause: 'store.extend.carries-retention', sql: [{ statement: 'extend', from: `expires_at = greatest(expires_at, ${ms('$6')})`, to: 'expires_at = expires_at' }] },
  { bug: 'extend does not renew', clause: 'store.extend.holder', sql: [{ statement: 'extend', from: `lease_expires_at = ${ms('$6')},`, to: 'lease_expires_at = lease_expires_at,' }] },
  { bug: 'purge ignores its limit', clause: 'store.purge.bounded', sql: [{ statement: 'purge', from: 'LIMIT $1', to: 'LIMIT $1::int + 1000' }] },
  { bug: 'purge deletes live records', clause: 'store.purge.live', sql: [{ statement: 'purge', from: 'WHERE expires_at <= statement_timestamp()', to: 'WHERE true' }] },
  {
    bug: 'a released outcome committed',
    clause: 'tx.rollback.released',
    wrap: ({ store }) =>
      replacing(store, {
        transaction: <T>(input: ClaimInput, work: (claim: Parameters<Parameters<PostgresStore['transaction']>[1]>[0], tx: PostgresTx) => Promise<TransactionDecision<T>>) =>
          store.transaction(input, async (claim, tx) => {
            const decision = await work(claim, tx);
            const released = (decision.value as { state?: string; response?: { status: number } }).response;
            return decision.action === 'rollback' && released ? { action: 'commit', state: 'failed_final', response: released, retentionMs: DAY, value: decision.value } : decision;
          }),
      }),
  },
  {
    bug: "a join commits on its own instead of in the caller's transaction",
    clause: 'tx.join',
    wrap: ({ store }) => replacing(store, { join: (_tx, input, work) => store.transaction(input, work) }),
  },
  {
    bug: 'complete checks, then writes',
    clause: 'store.cas.atomic',
    wrap: ({ store, db }) =>
      replacing(store, {
        async complete(input): Promise<FenceResult> {
          if (!(await holds(db, store.table, input))) return 'fence_lost';
          await db.query(
            `UPDATE ${store.table} SET state = $5, lease_token = NULL, lease_expires_at = NULL, response_status = $6, response_body = $7::text::json, expires_at = ${ms('$8')} WHERE ${byScope}`,
            [...scopeParams(input), input.state, input.response.status, JSON.stringify(input.response.body ?? null), input.retentionMs],
          );
          return 'ok';
        },
      }),
  },
  {
    bug: 'release checks, then deletes',
    clause: 'store.cas.atomic',
    wrap: ({ store, db }) =>
      replacing(store, {
        async release(input): Promise<FenceResult> {
          if (!(await holds(db, store.table, input))) return 'fence_lost';
          await db.query(`DELETE FROM ${store.table} WHERE ${byScope}`, scopeParams(input));
          return 'ok';
        },
      }),
  },
  {
    bug: 'extend checks, then writes',
    clause: 'store.cas.atomic',
    wrap: ({ store, db }) =>
      replacing(store, {
        async extend(input): Promise<FenceResult> {
          if (!(await holds(db, store.table, input))) return 'fence_lost';
          await db.query(`UPDATE ${store.table} SET lease_token = $5, lease_expires_at = ${ms('$6')}, expires_at = greatest(expires_at, ${ms('$6')}) WHERE ${byScope}`, [
            ...scopeParams(input),
            input.token,
            input.leaseMs,
          ]);
          return 'ok';
        },
      }),
  },
];
