import { createIdempotency, type StoredResponse } from '@oncely/core';
import type { ClaimInput, TransactionDecision } from '@oncely/core/adapter';
import { uniqueKey } from '@oncely/testkit';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostgresDb, postgresStore } from '../../src/index.js';
import { countingPool, kinds } from '../support/counting-pool.js';
import { createPool, DATABASE_URL, migratedSchema } from '../support/database.js';
import { blockedOnLock, gate, until } from '../support/wait.js';

const { pool: observer, schema } = migratedSchema('claim_race', { max: 3 });
const holderPool = createPool({ max: 2, application_name: 'oncely-holder' });
const waiterPool = createPool({ max: 2, application_name: 'oncely-waiter' });

afterAll(() => Promise.all([holderPool.end(), waiterPool.end()]));

const DAY = 86_400_000;
const paid: StoredResponse = { status: 201, body: { id: 'pay_1' }, resourceId: 'pay_1' };
const input = (token: string, over: Partial<ClaimInput> = {}): ClaimInput => ({
  scope: { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'unset' },
  fingerprint: 'f'.repeat(64),
  token,
  leaseMs: 60_000,
  retentionMs: DAY,
  ...over,
});

/**
 * Opens a transaction that claims `claim` and holds it until `release` resolves, then commits the
 * outcome or rolls back: the first attempt of a concurrent pair, frozen at its most dangerous point.
 */
function holdClaim(claim: ClaimInput, outcome: 'commit' | 'rollback') {
  const store = postgresStore({ db: holderPool, schema });
  const claimed = gate();
  const release = gate();
  const done = store.transaction(claim, async (result): Promise<TransactionDecision<string>> => {
    expect(result.kind).toBe('claimed');
    claimed.open();
    await release.opened;
    return outcome === 'commit'
      ? { action: 'commit', state: 'succeeded', response: paid, retentionMs: DAY, value: 'committed' }
      : { action: 'rollback', value: 'rolled back' };
  });
  return { claimed: claimed.opened, release: release.open, done };
}

/** A lease-mode claim started while `holdClaim` holds the key, answered once the holder ends. */
async function claimBehind(key: string, outcome: 'commit' | 'rollback', waiter: { db: PostgresDb; name: string }) {
  const scope = { ...input('x').scope, key };
  const holder = holdClaim(input('first', { scope }), outcome);
  await holder.claimed;
  const waiting = postgresStore({ db: waiter.db, schema }).claim(input('second', { scope }));
  await blockedOnLock(observer, waiter.name);
  holder.release();
  await holder.done;
  return waiting;
}

describe('lease-mode claim racing an uncommitted claim of the same key', () => {
  it('reads the committed outcome once the first commits (the READ COMMITTED snapshot trap)', async () => {
    const counted = countingPool(waiterPool);
    const result = await claimBehind(uniqueKey('trap'), 'commit', { db: counted, name: 'oncely-waiter' });
    expect(result.kind).toBe('existing');
    if (result.kind !== 'existing') return;
    expect(result.record.state).toBe('succeeded');
    expect(result.record.response).toEqual(paid);
    // The statement that waited saw a commit newer than its snapshot and said so; the second one read it.
    expect(kinds(counted.sent)).toEqual(['WITH', 'WITH']);
  });

  it('owns the key when the first rolls back', async () => {
    const result = await claimBehind(uniqueKey('rollback'), 'rollback', { db: waiterPool, name: 'oncely-waiter' });
    expect(result).toEqual({ kind: 'claimed', fence: 1, takeover: false });
  });

  it('reads the new owner when it waited on a takeover of an expired record', async () => {
    const store = postgresStore({ db: observer, schema });
    const key = uniqueKey('expired');
    const scope = { ...input('x').scope, key };
    await store.claim(input('ancient', { scope, leaseMs: 1, retentionMs: 1 }));
    await until('the record expires by the database clock', async () => (await store.get(scope)) === undefined);
    const result = await claimBehind(key, 'commit', { db: waiterPool, name: 'oncely-waiter' });
    expect(result.kind === 'existing' && result.record.response).toEqual(paid);
  });

  it('under REPEATABLE READ, retries the serialization failure and reads the committed outcome', async () => {
    const name = 'oncely-waiter-rr';
    const repeatable = createPool({ max: 2, application_name: name, options: '-c default_transaction_isolation=repeatable\\ read' });
    try {
      const result = await claimBehind(uniqueKey('repeatable'), 'commit', { db: repeatable, name });
      expect(result.kind === 'existing' && result.record.response).toEqual(paid);
    } finally {
      await repeatable.end();
    }
  });
});

describe('lease-mode round trips', () => {
  it('a first request is 2 statements, a replay 1, a collision 1, a released attempt 2', async () => {
    const counted = countingPool(observer);
    const store = postgresStore({ db: counted, schema });
    const engine = createIdempotency({ store });
    const request = { tenant: 'acme', operation: 'payments.create.v1', key: uniqueKey('trips'), request: { amount: 10 } };
    const measure = async (attempt: () => Promise<unknown>) => {
      counted.sent.length = 0;
      await attempt().catch(() => undefined);
      return kinds(counted.sent);
    };
    const busy = gate();
    const running = engine.run(request, async () => {
      await busy.opened;
      return { status: 201, body: { id: 'pay_1' } };
    });
    await until('the first attempt holds the key', async () => (await store.get({ ...request, principal: '' })) !== undefined);
    expect(await measure(() => engine.run(request, async () => ({ status: 201 })))).toEqual(['WITH']);
    counted.sent.length = 0;
    busy.open();
    await running;
    expect(kinds(counted.sent)).toEqual(['UPDATE']);
    expect(await measure(() => engine.run(request, async () => ({ status: 201 })))).toEqual(['WITH']);
    const first = { ...request, key: uniqueKey('trips-first') };
    expect(await measure(() => engine.run(first, async () => ({ status: 201 })))).toEqual(['WITH', 'UPDATE']);
    const failing = { ...request, key: uniqueKey('trips-error') };
    expect(
      await measure(() =>
        engine.run(failing, async () => {
          throw new Error('gateway down');
        }),
      ),
    ).toEqual(['WITH', 'DELETE']);
  });

  it('while replays dominate, a replay is the record read alone; a first request then pays that read, until first requests dominate again', async () => {
    const counted = countingPool(observer);
    const engine = createIdempotency({ store: postgresStore({ db: counted, schema }) });
    const request = { tenant: 'acme', operation: 'payments.create.v1', key: uniqueKey('hot'), request: { amount: 10 } };
    const measure = async (attempt: () => Promise<unknown>) => {
      counted.sent.length = 0;
      await attempt();
      return kinds(counted.sent);
    };
    const handler = async () => ({ status: 201, body: { id: 'pay_1' } });
    await engine.run(request, handler);
    for (let i = 0; i < 16; i++) expect((await engine.run(request, handler)).kind).toBe('replayed');
    expect(await measure(() => engine.run(request, handler))).toEqual(['SELECT']);
    const fresh = () => ({ ...request, key: uniqueKey('fresh') });
    expect(await measure(() => engine.run(fresh(), handler))).toEqual(['SELECT', 'WITH', 'UPDATE']);
    for (let i = 0; i < 16; i++) await engine.run(fresh(), handler);
    expect(await measure(() => engine.run(fresh(), handler))).toEqual(['WITH', 'UPDATE']);
  });

  it('a replay is a pure read: it takes no transaction id, so it writes nothing', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      const store = postgresStore({ db: client, schema });
      const scope = { ...input('x').scope, key: uniqueKey('read-only') };
      const xidDuring = async (claim: () => Promise<unknown>) => {
        await client.query('BEGIN');
        try {
          await claim();
          return (await client.query('SELECT txid_current_if_assigned() AS xid')).rows[0].xid as string | null;
        } finally {
          await client.query('ROLLBACK');
        }
      };
      expect(await xidDuring(() => store.claim(input('owner', { scope })))).not.toBeNull();
      await store.claim(input('owner', { scope }));
      await store.complete({ scope, token: 'owner', state: 'succeeded', response: paid, retentionMs: DAY });
      expect(await xidDuring(() => store.claim(input('replay', { scope })))).toBeNull();
    } finally {
      await client.end();
    }
  });
});
