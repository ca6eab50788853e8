export {
  type PrismaClientLike,
  type PrismaRawClient,
  type PrismaTransactionOptions,
  type PrismaTx,
  prismaBridge,
} from './bridge/prisma-bridge.js';
export { type OncelyPrismaAdapter, oncelyAdapter, type PrismaAdapterFactoryLike } from './bridge/prisma-held-adapter.js';
