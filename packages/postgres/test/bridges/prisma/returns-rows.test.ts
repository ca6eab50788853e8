import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { returnsRows } from '../../../src/bridge/returns-rows.js';
import { qualifiedName } from '../../../src/identifiers/identifier.js';
import { DEFAULT_INBOX_TABLE, DEFAULT_JOURNAL_TABLE, DEFAULT_OUTBOX_TABLE, DEFAULT_TABLE, migrate } from '../../../src/index.js';
import { inboxStatements } from '../../../src/inbox/inbox-statements.js';
import { journalStatements } from '../../../src/journal/journal-statements.js';
import { outboxStatements } from '../../../src/outbox/outbox-statements.js';
import { flowStatements } from '../../../src/store/flow-statements.js';
import { storeStatements } from '../../../src/sql/statements.js';

// The Prisma bridge sends a statement through $queryRawUnsafe (rows) or $executeRawUnsafe (a count)
// as returnsRows() judges it. PostgreSQL is the judge of the judge: the protocol's Describe of a
// statement answers a row description exactly when it returns rows (PGlite runs it, nothing executes).
const db = new PGlite();
const schema = 'returns_rows';
beforeAll(async () => {
  await migrate(db, { schema });
  await db.exec(`CREATE TABLE "${schema}".probe (a int)`);
});

/** What PostgreSQL says: does `text` return rows? */
async function postgresSays(text: string): Promise<boolean> {
  const { resultFields } = await db.describeQuery(text);
  return resultFields.length > 0;
}

/** Every statement oncely's store, flows, outbox, inbox and journal send, by name. */
function shippedStatements(): [string, string][] {
  const table = (name: string) => qualifiedName(schema, name);
  const outboxTables = {
    outbox: table(DEFAULT_OUTBOX_TABLE),
    sequences: table(`${DEFAULT_OUTBOX_TABLE}_sequences`),
    aggregates: table(`${DEFAULT_OUTBOX_TABLE}_aggregates`),
    claim: table(`${DEFAULT_OUTBOX_TABLE}_claim`),
  };
  const groups: Record<string, object> = {
    store: storeStatements(table(DEFAULT_TABLE)),
    flows: flowStatements(table(DEFAULT_TABLE), table(`${DEFAULT_TABLE}_flow`), table(`${DEFAULT_TABLE}_flow_phase`)),
    outbox: outboxStatements(outboxTables, false),
    'outbox (notify)': outboxStatements(outboxTables, true),
    inbox: inboxStatements(table(DEFAULT_INBOX_TABLE)),
    journal: journalStatements(table(DEFAULT_JOURNAL_TABLE)),
  };
  return Object.entries(groups).flatMap(([group, statements]) =>
    Object.entries(statements)
      .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
      .map(([name, text]): [string, string] => [`${group}.${name}`, text]),
  );
}

describe('returnsRows: which Prisma call a statement takes', () => {
  it('agrees with PostgreSQL on every statement oncely ships', async () => {
    const statements = shippedStatements();
    expect(statements.length).toBeGreaterThan(30);
    const disagreements: string[] = [];
    for (const [name, text] of statements) {
      const expected = await postgresSays(text);
      if (returnsRows(text) !== expected) disagreements.push(`${name}: PostgreSQL says ${expected ? 'rows' : 'a count'}`);
    }
    expect(disagreements).toEqual([]);
  });

  it('agrees with PostgreSQL on generated statements: CTEs, RETURNING, and keywords hidden in literals and comments', async () => {
    const noise = fc.constantFrom(
      '',
      ' /* RETURNING ( SELECT */ ',
      ' -- RETURNING )\n',
      " AND 'returning )' <> 'it''s ( select'",
      ' AND $$ RETURNING ( $$ <> $q$ ) select $q$',
      ' AND (SELECT true AS "returning")',
    );
    const cte = fc.constantFrom(
      'c AS (SELECT a FROM probe)',
      'c AS (UPDATE probe SET a = a WHERE false RETURNING a)',
      'c AS MATERIALIZED (DELETE FROM probe WHERE false RETURNING a)',
      'c AS (INSERT INTO probe (a) SELECT 1 WHERE false RETURNING a)',
    );
    const main = fc.constantFrom(
      (where: string) => `SELECT a FROM probe WHERE true${where}`,
      () => 'VALUES (1)',
      () => 'TABLE probe',
      (where: string) => `INSERT INTO probe (a) SELECT 1 WHERE true${where}`,
      () => 'INSERT INTO probe (a) VALUES ((SELECT 1))',
      (where: string) => `UPDATE probe SET a = (SELECT 1) WHERE true${where}`,
      (where: string) => `DELETE FROM probe WHERE a IN (SELECT a FROM probe)${where}`,
    );
    await fc.assert(
      fc.asyncProperty(fc.option(cte, { nil: undefined }), main, noise, fc.boolean(), async (withCte, statement, where, returning) => {
        const body = statement(where);
        const returnable = /^(INSERT|UPDATE|DELETE)/.test(body) && returning;
        const text = `${withCte ? `WITH ${withCte} ` : ''}${body}${returnable ? ' RETURNING a' : ''}`.replaceAll('probe', `"${schema}".probe`);
        expect(returnsRows(text), text).toBe(await postgresSays(text));
      }),
      { numRuns: 150 },
    );
  });

  it('counts, not rows, for statements outside the query and write keywords (SAVEPOINT, SET, RELEASE)', () => {
    for (const text of ['SAVEPOINT oncely_join', 'RELEASE SAVEPOINT oncely_join', 'ROLLBACK TO SAVEPOINT oncely_join', "SET LOCAL lock_timeout = '1s'"]) {
      expect(returnsRows(text), text).toBe(false);
    }
  });
});
