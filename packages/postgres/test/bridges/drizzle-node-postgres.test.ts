import { bridgeSuite } from './bridge-suite.js';
import { drizzleNodePostgres } from './cases/drizzle-node-postgres.js';

bridgeSuite(drizzleNodePostgres, { caseModule: new URL('./cases/drizzle-node-postgres.ts', import.meta.url), label: 'drizzle_pg' });
