import { isOncelyError } from '@oncely/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_IDENTIFIER_BYTES, migrate, quoteIdentifier } from '../../src/index.js';
import { migratedSchema } from '../support/database.js';

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const { pool, schema } = migratedSchema('identifiers', { max: 2 });

const outcome = (name: unknown) => {
  try {
    return quoteIdentifier(name);
  } catch (error) {
    return isOncelyError(error, 'invalid_option') ? 'rejected' : error;
  }
};

describe('identifier validation', () => {
  it('quotes exactly the plain names of at most 63 characters and rejects everything else (property)', () => {
    const unit = fc.constantFrom('a', 'Z', '_', '0', '9', '"', ';', ' ', '-', '.', '$', '\\', '\u0000', 'é', '😀');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit, maxLength: 70 }), fc.string({ maxLength: 70 })), (name) => {
        const plain = PLAIN.test(name) && name.length <= MAX_IDENTIFIER_BYTES;
        expect(outcome(name)).toBe(plain ? `"${name}"` : 'rejected');
      }),
      { numRuns: 2_000 },
    );
    for (const value of [undefined, null, 42, {}, ['t']]) expect(outcome(value)).toBe('rejected');
  });

  it('every accepted table name reaches PostgreSQL unchanged, case included, and so does its index (property)', async () => {
    const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,47}$/);
    await fc.assert(
      fc.asyncProperty(name, async (table) => {
        await migrate(pool, { schema, tables: { oncely_idempotency: table } });
        const { rows } = await pool.query(
          `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = $1 AND c.relname IN ($2, $3) ORDER BY c.relkind`,
          [schema, table, `${table}_expires_at_idx`],
        );
        expect(rows.map((row) => row.relname).sort()).toEqual([table, `${table}_expires_at_idx`].sort());
      }),
      { numRuns: 25 },
    );
  });

  it('a table name whose derived index name would pass 63 characters is rejected before any SQL runs', async () => {
    const table = `t${'x'.repeat(50)}`;
    const error = await migrate(pool, { schema, tables: { oncely_idempotency: table } }).catch((caught: unknown) => caught);
    expect(isOncelyError(error, 'invalid_option')).toBe(true);
    const { rows } = await pool.query(`SELECT 1 FROM pg_class WHERE relname = $1`, [table]);
    expect(rows).toHaveLength(0);
  });
});
