import { type Scope, type StoredResponse, toScope } from '@oncely/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { migratedSchema } from '../support/database.js';

const { pool, schema } = migratedSchema('round_trip', { max: 4 });
const store = postgresStore({ db: pool, schema });
const DAY = 86_400_000;
let run = 0;

/** Scopes core accepts, over the whole of Unicode where core allows it. */
const scopes = fc
  .record({
    tenant: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
    principal: fc.string({ unit: 'grapheme', maxLength: 12 }),
    operation: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,40}$/),
    key: fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 200 }),
  })
  .filter((scope) => {
    try {
      toScope(scope);
      return true;
    } catch {
      return false;
    }
  });

describe('what reaches the table comes back unchanged', () => {
  it('every scope core accepts is stored under exactly that scope and read back exactly (property)', async () => {
    await fc.assert(
      fc.asyncProperty(scopes, async (drawn) => {
        // A run number in the tenant keeps fast-check's repeated draws from meeting earlier records.
        const scope: Scope = { ...toScope(drawn), tenant: `${++run}|${drawn.tenant}` };
        expect((await store.claim({ scope, fingerprint: 'f', token: 't', leaseMs: 60_000, retentionMs: DAY })).kind).toBe('claimed');
        expect((await store.get(scope))?.scope).toEqual(scope);
        const { rows } = await pool.query(
          `SELECT tenant, principal, operation, idempotency_key AS key FROM ${store.table}
           WHERE tenant = $1 AND principal = $2 AND operation = $3 AND idempotency_key = $4`,
          [scope.tenant, scope.principal, scope.operation, scope.key],
        );
        expect(rows).toEqual([scope]);
      }),
      { numRuns: 60 },
    );
  });

  it('any JSON body replays exactly as it was sent: key order, U+0000 and lone surrogates included (property)', async () => {
    const bodies = fc.oneof(
      fc.jsonValue({ stringUnit: 'binary', maxDepth: 3 }),
      fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 3 }),
      fc.constant({ z: 1, a: 2, note: 'nul \u0000 inside', lone: '\uD800' }),
    );
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const scope: Scope = { tenant: `body-${++run}`, principal: '', operation: 'echo.v1', key: 'k' };
        const response: StoredResponse = { status: 201, headers: { 'content-type': 'application/json' }, body, resourceId: 'r1' };
        await store.claim({ scope, fingerprint: 'f', token: 't', leaseMs: 60_000, retentionMs: DAY });
        expect(await store.complete({ scope, token: 't', state: 'succeeded', response, retentionMs: DAY })).toBe('ok');
        const replayed = (await store.get(scope))?.response;
        // Byte for byte: the JSON text that comes back is the JSON text that went in.
        expect(JSON.stringify(replayed?.body)).toBe(JSON.stringify(body));
        expect(replayed).toEqual({ ...response, body: JSON.parse(JSON.stringify(body)) });
      }),
      { numRuns: 150 },
    );
  });
});
