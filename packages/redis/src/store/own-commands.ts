import type { Cluster, Redis } from 'ioredis';
import { unpipelinedCommand } from '../ioredis/internals.js';
import { type ScriptName, storeScripts } from './scripts.js';
import { tickBatcher } from './tick-batch.js';

/** The commands the store sends for a request, each batched with the tick's others (tick-batch.ts). */
export interface OwnCommands {
  /** `SET key value PX ttlMs NX GET`: claims an absent key or answers what it holds. */
  setNxGet(key: string, value: string, ttlMs: number): Promise<string | null>;
  /** One of the store's scripts on one record key. */
  script(name: ScriptName, key: string, args: readonly (string | number)[]): Promise<unknown>;
}

type SetNxGet = (this: Redis, key: string, value: string, px: 'PX', ttlMs: number, nx: 'NX', get: 'GET') => Promise<string | null>;

/**
 * Sends the store's commands. On a standalone client with `enableAutoPipelining` they go past
 * ioredis's auto-pipeline, whose uncapped per-tick batches left Redis and the client taking turns
 * (first requests at half the speed in `apps/bench`); the store batches them itself instead. A
 * Cluster keeps ioredis's own routing and pipelines.
 */
export function ownCommands(client: Redis | Cluster): OwnCommands {
  const batch = tickBatcher(client);
  const direct = !client.isCluster && client.options.enableAutoPipelining === true ? (client as Redis) : undefined;
  // Past the auto-pipeline where the installed ioredis allows it (ioredis/internals.ts), else ioredis's own `set`.
  const set: SetNxGet = (direct && (unpipelinedCommand(direct, 'set') as SetNxGet | undefined)) || (client as Redis).set;
  return {
    setNxGet(key, value, ttlMs) {
      batch();
      return set.call(client as Redis, key, value, 'PX', ttlMs, 'NX', 'GET');
    },
    script(name, key, args) {
      batch();
      return direct ? storeScripts.callUnpipelined(direct, name, [key], args) : storeScripts.call(client, name, [key], args);
    },
  };
}
