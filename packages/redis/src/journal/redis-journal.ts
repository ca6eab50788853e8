import { OncelyError } from '@oncely/core';
import {
  assertValidOperationId,
  type JournalEntry,
  type OperationJournal,
  operationNotBegun,
  resolveBegin,
  resolveListUnresolved,
  resolveOutcome,
  resolvePurgeSettled,
  storageGuard,
} from '@oncely/core/adapter';
import type { Cluster, Redis } from 'ioredis';
import { journalKeys } from './journal-keys.js';
import { toEntry } from './journal-reply.js';
import { journalScripts } from './journal-scripts.js';

/** Options of {@link redisJournal}. */
export interface RedisJournalOptions {
  /** An ioredis `Redis` or `Cluster` you own: the journal never closes it. */
  readonly client: Redis | Cluster;
  /** Names the journal's keys (`{<prefix>}:...`); no braces. Default `oncely:journal`. */
  readonly prefix?: string;
}

/** The Redis journal. */
export interface RedisJournal extends OperationJournal {
  /** The prefix its keys are tagged with (`{<prefix>}:...`), for operators and raw inspection. */
  readonly prefix: string;
}

/** Default journal prefix. */
export const DEFAULT_JOURNAL_PREFIX = 'oncely:journal';

/**
 * An {@link OperationJournal} on Redis. One hash per operation and three sorted-set indexes (pending,
 * unknown, settled) by last change; begin, attempt, outcome and unknown are each one Lua script, so
 * one atomic round trip judged by the Redis server's clock. Listing and purging read an index in one
 * script and the entries in a second round trip, re-checking what they read. Persistence is Redis's:
 * run it with AOF (`appendfsync everysec` or `always`) if a journal entry must survive a Redis crash.
 */
export function redisJournal(options: RedisJournalOptions): RedisJournal {
  const { client } = options;
  if (!client || typeof client.defineCommand !== 'function' || typeof client.pipeline !== 'function') {
    throw new OncelyError('invalid_option', 'oncely/redis: redisJournal needs an ioredis Redis or Cluster client');
  }
  const prefix = options.prefix ?? DEFAULT_JOURNAL_PREFIX;
  const keys = journalKeys(prefix, client);
  journalScripts.register(client);

  /** Every failure leaves as a StorageError (validation errors, raised before, stay as they are). */
  const guard = storageGuard('redis');
  const existing = (operationId: string, reply: unknown): JournalEntry => {
    const entry = toEntry(reply);
    if (!entry) throw operationNotBegun('redis', operationId);
    return entry;
  };
  const flag = (value: string | undefined) => (value === undefined ? ['0', ''] : ['1', value]);

  return {
    name: 'redis',
    prefix,
    async begin(operationId, beginOptions) {
      const { key, requestJson } = resolveBegin(operationId, beginOptions);
      return guard('journal.begin', async () => {
        const reply = (await journalScripts.call(client, 'begin', [keys.entry(operationId), keys.pending], [
          operationId,
          key,
          ...flag(requestJson),
        ])) as unknown[];
        const kind = reply[0] === 'started' ? 'started' : 'resumed';
        return { kind, entry: existing(operationId, reply.slice(1)) };
      });
    },
    async get(operationId) {
      assertValidOperationId(operationId);
      return guard('journal.get', async () => toEntry(await client.hgetall(keys.entry(operationId)).then(flatten)));
    },
    // Each reply is read inside the guard: one this code cannot read leaves as a corrupt_record StorageError.
    async recordAttempt(operationId) {
      assertValidOperationId(operationId);
      return guard('journal.recordAttempt', async () => {
        const keysOf = [keys.entry(operationId), keys.pending, keys.unknown];
        return existing(operationId, await journalScripts.call(client, 'attempt', keysOf, [operationId]));
      });
    },
    async complete(operationId, outcome) {
      assertValidOperationId(operationId);
      const { state, dataJson } = resolveOutcome(outcome);
      return guard('journal.complete', async () => {
        const keysOf = [keys.entry(operationId), keys.pending, keys.unknown, keys.settled];
        return existing(operationId, await journalScripts.call(client, 'complete', keysOf, [operationId, state, ...flag(dataJson)]));
      });
    },
    async markUnknown(operationId, lastError) {
      assertValidOperationId(operationId);
      return guard('journal.markUnknown', async () => {
        const keysOf = [keys.entry(operationId), keys.pending, keys.unknown];
        const error = flag(lastError === undefined ? undefined : String(lastError));
        return existing(operationId, await journalScripts.call(client, 'unknown', keysOf, [operationId, ...error]));
      });
    },
    async listUnresolved(listOptions) {
      const { staleAfterMs, limit } = resolveListUnresolved(listOptions);
      return guard('journal.listUnresolved', async () => {
        const [cutoff, ...pairs] = (await journalScripts.call(client, 'unresolved', [keys.pending, keys.unknown], [
          Math.floor(staleAfterMs),
          limit,
        ])) as string[];
        const ids = pairs.filter((_, index) => index % 2 === 0);
        const pipeline = client.pipeline();
        for (const id of ids) pipeline.hgetall(keys.entry(id));
        const replies = (await pipeline.exec()) ?? [];
        const entries: JournalEntry[] = [];
        for (const [error, fields] of replies) {
          if (error) throw error;
          const entry = toEntry(flatten(fields as Record<string, string>));
          // An entry may have moved on between the two round trips: list only what still qualifies.
          if (entry?.state === 'unknown' || (entry?.state === 'pending' && entry.updatedAt.getTime() <= Number(cutoff))) {
            entries.push(entry);
          }
        }
        return entries;
      });
    },
    async purgeSettled(purgeOptions) {
      const { olderThanMs, limit } = resolvePurgeSettled(purgeOptions);
      return guard('journal.purgeSettled', async () => {
        const [cutoff, ...ids] = (await journalScripts.call(client, 'settled', [keys.settled], [Math.floor(olderThanMs), limit])) as string[];
        if (ids.length === 0) return 0;
        const pipeline = client.pipeline();
        for (const id of ids) void journalScripts.call(pipeline, 'forget', [keys.entry(id), keys.settled], [id, cutoff!]);
        const replies = (await pipeline.exec()) ?? [];
        let deleted = 0;
        for (const [error, reply] of replies) {
          if (error) throw error;
          deleted += Number(reply);
        }
        return deleted;
      });
    },
    async close() {},
  };
}

/** HGETALL answers an object; the scripts answer flat arrays. One shape for both. */
function flatten(fields: Record<string, string>): string[] {
  return Object.entries(fields ?? {}).flat();
}
