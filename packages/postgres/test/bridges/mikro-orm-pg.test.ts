import { bridgeSuite } from './bridge-suite.js';
import { mikroOrmPg } from './cases/mikro-orm-pg.js';

bridgeSuite(mikroOrmPg, { caseModule: new URL('./cases/mikro-orm-pg.ts', import.meta.url), label: 'mikro_orm' });
