import { PGlite } from '@electric-sql/pglite';
import { runStoreConformance } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdempotency } from '@oncely/core';
import { migrate, type PostgresTx, postgresStore } from '../../src/index.js';
import { recordingPglite, type Sent } from '../support/recording-pglite.js';
import { createBusinessTables } from '../support/business.js';
import { rawRecord } from '../support/database.js';
import { transactionalBehaviours } from '../transactional/behaviours.js';

// One embedded database for the file, since starting PGlite takes seconds: the conformance suite
// gets a table per test in `public`, the transactional behaviours their own schema.
const db = new PGlite();
const schema = 'payments';
let tables = 0;

beforeAll(async () => {
  await migrate(db, { schema });
  await createBusinessTables(db, schema);
});
afterAll(() => db.close());

runStoreConformance({ describe, it, expect }, {
  name: 'postgres (PGlite)',
  createStore: async () => {
    const table = `records_${++tables}`;
    await migrate(db, { tables: { oncely_idempotency: table } });
    return postgresStore({ db, table });
  },
  inspect: (store, scope) => rawRecord(db, store.table, scope),
  openTransaction: (_store, body) => db.transaction(body),
  // PGlite runs every statement in turn on its one connection: its races cannot overlap, so they run small.
  raceSize: 10,
  raceRounds: 4,
});

transactionalBehaviours('PGlite', () => ({ db, schema }));

describe('PGlite: calls per transactional request', () => {
  const handler = async ({ tx }: { tx: PostgresTx }) => {
    await tx.query('SELECT 1');
    return { status: 201 };
  };

  it('a first request reads nothing before its transaction; a lone replay answers from the claim inside one', async () => {
    const sent: Sent[] = [];
    const engine = createIdempotency({ store: postgresStore({ db: recordingPglite(db, sent), schema }) });
    const warm = { tenant: 'acme', operation: 'payments.create.v1', key: `warm-${Date.now()}`, request: {} };
    // The first request on an instance PREPAREs oncely's statements; the second is the steady state.
    expect((await engine.runInTransaction(warm, handler)).kind).toBe('executed');
    const request = { ...warm, key: `calls-${Date.now()}` };
    sent.length = 0;
    expect((await engine.runInTransaction(request, handler)).kind).toBe('executed');
    // The claim (one upsert), the handler's statement and the save, all inside db.transaction().
    expect(sent.map((s) => s.inTransaction)).toEqual([true, true, true]);
    sent.length = 0;
    expect((await engine.runInTransaction(request, handler)).kind).toBe('replayed');
    expect(sent.every((s) => s.inTransaction)).toBe(true);
  });

  it('while replays dominate, a replay is one read, outside any transaction', async () => {
    const sent: Sent[] = [];
    const engine = createIdempotency({ store: postgresStore({ db: recordingPglite(db, sent), schema }) });
    const request = { tenant: 'acme', operation: 'payments.create.v1', key: `replays-${Date.now()}`, request: {} };
    expect((await engine.runInTransaction(request, handler)).kind).toBe('executed');
    for (let i = 0; i < 16; i++) expect((await engine.runInTransaction(request, handler)).kind).toBe('replayed');
    sent.length = 0;
    expect((await engine.runInTransaction(request, handler)).kind).toBe('replayed');
    expect(sent).toEqual([{ text: expect.stringMatching(/^EXECUTE oncely_\w+_s\(/), inTransaction: false }]);
  });
});

describe('PGlite: the transactional claim', () => {
  const store = postgresStore({ db, schema });
  const claimOf = async (key: string, fingerprint = 'fp') => {
    const input = { scope: { tenant: 'acme', principal: 'p', operation: 'claims.v1', key }, fingerprint, token: crypto.randomUUID(), leaseMs: 30_000, retentionMs: 60_000 };
    const seen: unknown[] = [];
    await store.transaction(input, async (claim) => {
      seen.push(claim.kind === 'existing' ? { kind: 'existing', state: claim.record.state } : claim);
      return { action: 'rollback', value: undefined };
    });
    return seen[0];
  };
  const table = `"${schema}".oncely_idempotency`;

  it('a fresh key is claimed with fence 1; a lapsed lease of the same request is taken over, fence + 1 and createdAt kept', async () => {
    const key = `upsert-${Date.now()}`;
    const input = { scope: { tenant: 'acme', principal: 'p', operation: 'claims.v1', key }, fingerprint: 'fp', token: 't1', leaseMs: 30_000, retentionMs: 60_000 };
    expect(await store.claim(input)).toEqual({ kind: 'claimed', fence: 1, takeover: false });
    await db.query(`UPDATE ${table} SET lease_expires_at = now() - interval '1 second', created_at = '2020-01-01' WHERE idempotency_key = $1`, [key]);
    expect(await claimOf(key, 'other')).toEqual({ kind: 'existing', state: 'in_progress' });
    expect(await claimOf(key)).toEqual({ kind: 'claimed', fence: 2, takeover: true });
    // The takeover rolled back with its transaction: the lapsed record is as it was.
    expect((await db.query<{ fence: number }>(`SELECT fence FROM ${table} WHERE idempotency_key = $1`, [key])).rows).toEqual([{ fence: 1 }]);
    expect(await claimOf(`${key}-new`)).toEqual({ kind: 'claimed', fence: 1, takeover: false });
  });

  it('an expired record is claimed anew with fence 1; a live one answers existing', async () => {
    const key = `upsert-expired-${Date.now()}`;
    const input = { scope: { tenant: 'acme', principal: 'p', operation: 'claims.v1', key }, fingerprint: 'fp', token: 't1', leaseMs: 30_000, retentionMs: 60_000 };
    await store.claim(input);
    await store.complete({ ...input, state: 'succeeded', response: { status: 201 }, retentionMs: 60_000 });
    await db.query(`UPDATE ${table} SET fence = 3 WHERE idempotency_key = $1`, [key]);
    expect(await claimOf(key)).toEqual({ kind: 'existing', state: 'succeeded' });
    await db.query(`UPDATE ${table} SET expires_at = now() - interval '1 second' WHERE idempotency_key = $1`, [key]);
    expect(await claimOf(key, 'any')).toEqual({ kind: 'claimed', fence: 1, takeover: false });
  });
});
