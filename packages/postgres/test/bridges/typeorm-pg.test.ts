import { bridgeSuite } from './bridge-suite.js';
import { typeormPg } from './cases/typeorm-pg.js';

bridgeSuite(typeormPg, { caseModule: new URL('./cases/typeorm-pg.ts', import.meta.url), label: 'typeorm' });
