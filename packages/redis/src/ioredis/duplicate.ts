import type { Cluster, Redis } from 'ioredis';

/**
 * A new connection like `client`, whose replies keep the shapes ioredis 5 gives. ioredis 6 speaks RESP3
 * and, under `replyMapping: 'resp3'`, answers stream reads (`XREADGROUP`) as objects instead of
 * arrays; the duplicate asks for `'legacy'`, ioredis 6's default, which ioredis 5 ignores. The
 * caller's own client keeps its settings.
 */
export function duplicateWithLegacyReplies(client: Redis | Cluster): Redis | Cluster {
  if (client.isCluster) {
    const cluster = client as Cluster;
    // ioredis 5 replaces `redisOptions` wholesale on a duplicate: pass every one of them.
    const redisOptions = { ...cluster.options.redisOptions, replyMapping: 'legacy' };
    return cluster.duplicate(undefined, { redisOptions } as Parameters<Cluster['duplicate']>[1]);
  }
  return (client as Redis).duplicate({ replyMapping: 'legacy' } as Parameters<Redis['duplicate']>[0]);
}
