import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { migrate } from '../../src/index.js';
import { createBusinessTables } from '../support/business.js';
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from '../support/database.js';
import { transactionalBehaviours } from './behaviours.js';

// One connection for everything: the store serializes its statements and transactions on it.
const client = new pg.Client({ connectionString: DATABASE_URL });
const admin = createPool({ max: 1 });
const schema = uniqueSchema('tx_client');

beforeAll(async () => {
  await client.connect();
  await migrate(client, { schema });
  await createBusinessTables(client, schema);
});
afterAll(async () => {
  await client.end();
  await dropSchema(admin, schema);
  await admin.end();
});

transactionalBehaviours('pg.Client', () => ({ db: client, schema }));
