import { PGlite } from '@electric-sql/pglite';
import { createIdempotency } from '@oncely/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrate, postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema } from '../support/database.js';
import { recordingPglite, type Sent } from '../support/recording-pglite.js';

const { schema } = migratedSchema('prepared', { max: 1 });

/** What this one connection has prepared, read on the connection itself. */
async function preparedOn(preparedStatements: boolean): Promise<{ names: string[]; kinds: string[] }> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const engine = createIdempotency({ store: postgresStore({ db: client, schema, preparedStatements }) });
    const request = { tenant: 'acme', operation: 'payments.create.v1', key: `k-${preparedStatements}-${Date.now()}`, request: {} };
    const first = await engine.run(request, async () => ({ status: 201, body: { id: 'pay_1' } }));
    const replay = await engine.run(request, async () => ({ status: 201 }));
    const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
    return { names: rows.map((row) => row.name), kinds: [first.kind, replay.kind] };
  } finally {
    await client.end();
  }
}

describe('prepared statements', () => {
  it("oncely's own statements are prepared once per connection under names derived from their text", async () => {
    const { names, kinds } = await preparedOn(true);
    expect(kinds).toEqual(['executed', 'replayed']);
    // claim (run twice, prepared once) and complete.
    expect(names.length).toBe(2);
    for (const name of names) expect(name).toMatch(/^oncely_[0-9a-f]{16}$/);
  });

  it('preparedStatements: false sends plain statements (for poolers that cannot keep them)', async () => {
    const { names, kinds } = await preparedOn(false);
    expect(kinds).toEqual(['executed', 'replayed']);
    expect(names).toEqual([]);
  });
});

/** A second object over one pg client: a wrapper that passes everything through and records each message. */
function recordingClient(client: pg.Client, sent: Sent[]) {
  return {
    query(textOrConfig: string | { text: string }, values?: unknown[]) {
      sent.push({ text: typeof textOrConfig === 'string' ? textOrConfig : textOrConfig.text, inTransaction: false });
      return client.query(textOrConfig as string, values);
    },
  };
}

const firstRequest = (key: string) => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { key } });

describe('two driver objects over one connection never PREPARE inside a transaction', () => {
  it('PGlite: a store on the instance and one on a proxy of it take turns, and every transaction commits', async () => {
    const db = await PGlite.create();
    try {
      await migrate(db);
      const sent: Sent[] = [];
      const engines = [db, recordingPglite(db, sent)].map((handle) => createIdempotency({ store: postgresStore({ db: handle }) }));
      for (let index = 0; index < 6; index++) {
        const result = await engines[index % 2]!.runInTransaction(firstRequest(`k-${index}`), async ({ tx }) => {
          await tx.query('SELECT 1');
          return { status: 201 };
        });
        expect(result.kind).toBe('executed');
      }
      expect(sent.filter((statement) => statement.inTransaction && /PREPARE/i.test(statement.text))).toEqual([]);
      // The proxy's store did try to prepare (outside, where 42P05 is harmless) and ran prepared afterwards.
      expect(sent.some((statement) => !statement.inTransaction && /^PREPARE/.test(statement.text))).toBe(true);
      expect(sent.some((statement) => statement.inTransaction && /^EXECUTE oncely_/.test(statement.text))).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('pg.Client: a store on the client and one on a wrapper of it take turns; PREPARE travels only in the message that opens', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      const sent: Sent[] = [];
      const engines = [client, recordingClient(client, sent)].map((handle) =>
        createIdempotency({ store: postgresStore({ db: handle, schema }) }),
      );
      for (let index = 0; index < 6; index++) {
        const result = await engines[index % 2]!.runInTransaction(firstRequest(`pg-${Date.now()}-${index}`), async ({ tx }) => {
          await tx.query('SELECT 1');
          return { status: 201 };
        });
        expect(result.kind).toBe('executed');
      }
      // Every message that carries a PREPARE is one that ends in BEGIN: sent while no transaction is open.
      const preparing = sent.filter((statement) => /PREPARE/.test(statement.text));
      expect(preparing.length).toBeGreaterThan(0);
      for (const statement of preparing) expect(statement.text).toMatch(/;\nBEGIN$/);
    } finally {
      await client.end();
    }
  });
});
