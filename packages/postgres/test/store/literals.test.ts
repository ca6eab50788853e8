import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { literal, UnrepresentableLiteral } from '../../src/sql/literal.js';
import { DATABASE_URL } from '../support/database.js';

/** Strings a literal must survive: quotes, backslashes, what looks like an escape, a dollar quote, an injection. */
const awkward = fc.constantFrom("'", "''", '\\', "\\'", "E'", "\\x41", '\\0', '\\u0041', '$$', '$1', "'; DROP TABLE t; --", 'é😀', '\n\t');

/** Any text PostgreSQL can hold: well-formed UTF-16 without U+0000, mixed with the awkward pieces. */
const texts = fc
  .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 20 }), awkward), { maxLength: 6 })
  .map((parts) => parts.join(''))
  // No U+0000, no lone surrogate (UTF-8 cannot carry one; pg would send U+FFFD, as for a parameter).
  .filter((text) => !text.includes('\u0000') && !/\p{Cs}/u.test(text));

for (const conforming of ['on', 'off'] as const) {
  describe(`literals with standard_conforming_strings = ${conforming}`, () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    beforeAll(async () => {
      await client.connect();
      await client.query(`SET standard_conforming_strings = ${conforming}`);
    });
    afterAll(() => client.end());

    it('any text reads back exactly, through a simple-protocol message (property)', async () => {
      await fc.assert(
        fc.asyncProperty(texts, async (text) => {
          // No parameters: pg sends this as one simple-protocol Query, as oncely's messages are.
          const { rows } = await client.query(`SELECT ${literal(text)}::text AS v, ${literal(text)} = ${literal(text)} AS same`);
          expect(rows).toEqual([{ v: text, same: true }]);
        }),
        { numRuns: 200 },
      );
    });

    it('numbers and booleans read back as the parameters pg would bind (property)', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), async (integer, double, bool) => {
          const { rows } = await client.query(
            `SELECT ${literal(integer)}::int8::text AS i, ${literal(double)}::float8 AS d, ${literal(bool)}::boolean AS b, ${literal(null)}::text AS n`,
          );
          // pg binds a number as its String(): -0 travels as 0, as here.
          expect(rows).toEqual([{ i: String(integer), d: Number(String(double)), b: bool, n: null }]);
        }),
        { numRuns: 100 },
      );
    });
  });
}

describe('literals PostgreSQL cannot hold', () => {
  it('U+0000 is refused before anything is sent, with a typed error', () => {
    expect(() => literal('pay\u0000')).toThrow(UnrepresentableLiteral);
    expect(literal("it's \\ fine")).toBe("E'it''s \\\\ fine'");
  });
});
