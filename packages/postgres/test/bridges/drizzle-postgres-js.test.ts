import { bridgeSuite } from './bridge-suite.js';
import { drizzlePostgresJs } from './cases/drizzle-postgres-js.js';

bridgeSuite(drizzlePostgresJs, { caseModule: new URL('./cases/drizzle-postgres-js.ts', import.meta.url), label: 'drizzle_pgjs' });
