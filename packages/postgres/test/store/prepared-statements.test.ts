import { createIdempotency } from '@oncely/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema } from '../support/database.js';

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
