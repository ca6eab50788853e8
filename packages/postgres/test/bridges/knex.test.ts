import { bridgeSuite } from './bridge-suite.js';
import { knexCase } from './cases/knex.js';

bridgeSuite(knexCase, { caseModule: new URL('./cases/knex.ts', import.meta.url), label: 'knex' });
