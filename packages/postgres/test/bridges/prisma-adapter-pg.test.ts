import { bridgeSuite } from './bridge-suite.js';
import { prismaAdapterPg } from './cases/prisma-adapter-pg.js';

bridgeSuite(prismaAdapterPg, { caseModule: new URL('./cases/prisma-adapter-pg.ts', import.meta.url), label: 'prisma' });
