import { createIdempotency } from '@oncely/core';
import { uniqueKey } from '@oncely/testkit';
import type postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { migratedSchema } from '../support/database.js';
import { createSql } from '../support/postgresjs.js';

const { schema } = migratedSchema('pgjs_replay_read');
const sql = createSql({ max: 4 });
afterAll(() => sql.end());

/** The real instance, with its `unsafe` and `reserve` calls counted on the way through. */
function counted(db: postgres.Sql) {
  const calls = { unsafe: 0, reserve: 0 };
  const seen = new Proxy(db, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if ((property === 'unsafe' || property === 'reserve') && typeof value === 'function') {
        return (...args: unknown[]) => {
          calls[property]++;
          return Reflect.apply(value, target, args);
        };
      }
      return value;
    },
  });
  return { db: seen, calls };
}

const attempt = (key: string) => ({ tenant: 't', principal: 'p', operation: 'pay', key, request: { amount: 1 } });

describe('postgres.js replays while replays dominate', () => {
  it.each(['lease', 'transactional'] as const)('a %s replay of a completed record is one pooled statement and reserves no connection', async (mode) => {
    const { db, calls } = counted(sql);
    const engine = createIdempotency({ store: postgresStore({ db, schema }) });
    const call = (key: string) =>
      mode === 'lease'
        ? engine.run(attempt(key), async () => ({ status: 201, body: { key } }))
        : engine.runInTransaction(attempt(key), async () => ({ status: 201, body: { key } }));
    const key = uniqueKey('replay');
    expect((await call(key)).kind).toBe('executed');
    // Enough replays in a row for the store to read first (replay-odds.ts).
    for (let i = 0; i < 16; i++) expect((await call(key)).kind).toBe('replayed');
    const before = { ...calls };
    const replay = await call(key);
    expect(replay).toEqual({ kind: 'replayed', state: 'succeeded', response: { status: 201, body: { key } } });
    expect({ unsafe: calls.unsafe - before.unsafe, reserve: calls.reserve - before.reserve }).toEqual({ unsafe: 1, reserve: 0 });
  });
});
