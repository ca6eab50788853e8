import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { createBusinessTables } from '../support/business.js';
import { DATABASE_URL, migratedSchema } from '../support/database.js';
import { transactionalBehaviours } from './behaviours.js';

// One connection for everything: the store serializes its statements and transactions on it.
const client = new pg.Client({ connectionString: DATABASE_URL });
const { schema } = migratedSchema('tx_client', { max: 1 });

beforeAll(async () => {
  await client.connect();
  await createBusinessTables(client, schema);
});
afterAll(() => client.end());

transactionalBehaviours('pg.Client', () => ({ db: client, schema }));
