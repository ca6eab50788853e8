import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll } from 'vitest';
import { migrate } from '../../src/index.js';
import { createBusinessTables } from '../support/business.js';
import { transactionalBehaviours } from './behaviours.js';

const db = new PGlite();
const schema = 'payments';

beforeAll(async () => {
  await migrate(db, { schema });
  await createBusinessTables(db, schema);
});
afterAll(() => db.close());

transactionalBehaviours('PGlite', () => ({ db, schema }));
