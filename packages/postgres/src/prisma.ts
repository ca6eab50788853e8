export {
  type PrismaClientLike,
  type PrismaRawClient,
  type PrismaTransactionOptions,
  type PrismaTx,
  prismaBridge,
} from './bridge/prisma-bridge.js';
