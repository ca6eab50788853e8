import { bridgeSuite } from './bridge-suite.js';
import { kyselyCase } from './cases/kysely.js';

bridgeSuite(kyselyCase, { caseModule: new URL('./cases/kysely.ts', import.meta.url), label: 'kysely' });
