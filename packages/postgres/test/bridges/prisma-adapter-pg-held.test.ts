import { bridgeSuite } from './bridge-suite.js';
import { prismaAdapterPgHeld } from './cases/prisma-adapter-pg-held.js';

bridgeSuite(prismaAdapterPgHeld, { caseModule: new URL('./cases/prisma-adapter-pg-held.ts', import.meta.url), label: 'prisma_held' });
