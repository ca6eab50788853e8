import type { Cluster, Redis } from 'ioredis';
import { type Corkable, connectionSocket } from '../ioredis/internals.js';

/**
 * Commands per write. Small enough that Redis starts on the first commands while the client is
 * still producing the rest (one write for all 32 of a burst left the two sides taking turns).
 */
const MAX_BATCH = 8;

/**
 * Coalesces the commands the store sends within one tick into one socket write, as node-redis
 * does: the connection's socket is corked at the first command and uncorked on the next tick.
 * Concurrent requests then cost one write system call per tick instead of one each, with no
 * pipeline object. A tick ends before any reply can be read, so no command waits on another's reply.
 * Skipped for a Cluster (one socket per node, chosen by ioredis). The commands must not be
 * auto-pipelined (own-commands.ts sees to it): ioredis would write them in a pipeline of its own.
 */
export function tickBatcher(client: Redis | Cluster): () => void {
  if (client.isCluster) return () => undefined;
  const single = client as Redis;
  let corked: Corkable | undefined;
  let queued = 0;
  const flush = () => {
    const socket = corked;
    corked = undefined;
    queued = 0;
    socket?.uncork();
  };
  return () => {
    if (corked && queued >= MAX_BATCH) flush();
    if (!corked) {
      if (single.status !== 'ready') return;
      const socket = connectionSocket(single);
      if (!socket) return;
      socket.cork();
      corked = socket;
      process.nextTick(flush);
    }
    queued++;
  };
}
