import { type IdempotencyStore, OncelyError, type Scope } from '@oncely/core';
import { type ClaimInput, type ClaimResult, markTextOnly, storageGuard, storedResponseJson } from '@oncely/core/adapter';
import type { Cluster, Redis } from 'ioredis';
import {
  checkReplicaWait,
  type ReplicaWait,
  replicationShortfall,
  waitForReplicas,
  writeThenWait,
} from '../replication/replica-wait.js';
import { recordKey } from './record-key.js';
import { freshClaimJson, isInProgress, toClaimResult, toCompleteReply, toExisting, toFenceResult, toRecord } from './record-reply.js';
import { ownCommands } from './own-commands.js';
import { type ScriptName, storeScripts } from './scripts.js';

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster` you own: the store never closes it. */
  readonly client: Redis | Cluster;
  /** Start of every record key; no braces (they would steal the hash tag). Default `oncely:idem:`. */
  readonly prefix?: string;
  /**
   * Waits for replicas after every write that grants or records ownership (a winning claim, extend,
   * complete) and fails with a StorageError when too few acknowledge. Off by default.
   */
  readonly wait?: ReplicaWait;
}

/** The Redis idempotency store. */
export interface RedisStore extends IdempotencyStore {
  readonly capabilities: { readonly transactions: false; readonly nativeTtl: true };
  /** The prefix every record key starts with. */
  readonly prefix: string;
  /** The Redis key holding a scope's record, for operators and raw inspection. */
  keyOf(scope: Scope): string;
}

/** Default start of every record key. */
export const DEFAULT_PREFIX = 'oncely:idem:';
/** What every fresh claim answers: the first fence, no takeover. Frozen, so one object serves them all. */
const FRESH_CLAIM: ClaimResult = Object.freeze({ kind: 'claimed', fence: 1, takeover: false });
/** Completes stored on the primary but not yet confirmed by replicas that one store remembers. */
const MAX_UNCONFIRMED = 1_000;

function checkPrefix(prefix: unknown, client: Redis | Cluster): string {
  const clientPrefix = (client.options as { keyPrefix?: unknown } | undefined)?.keyPrefix ?? '';
  if (typeof prefix !== 'string' || typeof clientPrefix !== 'string' || /[{}]/.test(prefix + clientPrefix)) {
    throw new OncelyError(
      'invalid_option',
      'oncely/redis: prefix (and the client keyPrefix) must be strings without braces, which would take over the hash tag',
    );
  }
  return prefix;
}

/**
 * An {@link IdempotencyStore} on Redis or Redis Cluster (Redis ≥ 7.0). One JSON string per record,
 * with the whole scope as its hash tag. A claim or a replay is one native `SET NX GET`: it claims an
 * absent key or answers a completed record in one round trip, with no script. Everything that judges
 * a lease (a duplicate of an in-progress record, complete, extend, release) is one Lua script on the
 * Redis server's clock. Lease and retention are Redis TTLs: Redis deletes
 * expired records itself (`nativeTtl`), and `purgeExpired` has nothing to do.
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  const { client } = options;
  if (!client || typeof client.defineCommand !== 'function' || typeof client.pipeline !== 'function') {
    throw new OncelyError('invalid_option', 'oncely/redis: redisStore needs an ioredis Redis or Cluster client');
  }
  const prefix = checkPrefix(options.prefix ?? DEFAULT_PREFIX, client);
  const wait = checkReplicaWait(options.wait);
  storeScripts.register(client);
  // Concurrent requests share one socket write per tick.
  const { setNxGet, script } = ownCommands(client);
  // A complete whose WAIT fell short is stored on the primary: the engine's retry must not read it as lost.
  const unconfirmed = new Set<string>();

  const keyOf = (scope: Scope) => recordKey(prefix, scope);

  /** Every failure leaves as a StorageError: the caller fails closed. */
  const guard = storageGuard('redis');

  /** Runs a writing script; with `wait`, WAIT follows in the same pipeline (one write) and round trip. */
  const write = async (name: ScriptName, key: string, args: readonly (string | number)[]) =>
    wait
      ? writeThenWait(client, wait, (pipeline) => storeScripts.call(pipeline, name, [key], args))
      : { reply: await script(name, key, args), acknowledged: undefined };

  /** The error to throw when fewer replicas than required acknowledged `what`. */
  const shortfall = (what: string, acknowledged: number | undefined) =>
    wait && acknowledged !== undefined && acknowledged < wait.replicas
      ? replicationShortfall(what, acknowledged, wait)
      : undefined;

  const remember = (id: string) => {
    unconfirmed.add(id);
    if (unconfirmed.size > MAX_UNCONFIRMED) unconfirmed.delete(unconfirmed.values().next().value as string);
  };

  /** A claim that found an in-progress record, or that must wait for replicas: the slower paths. */
  const judgeClaim = async (input: ClaimInput, key: string, held: string | null): Promise<ClaimResult> => {
    let result: ClaimResult = FRESH_CLAIM;
    if (held !== null) {
      // Only the server's clock may say whether that lease lapsed: the claim script judges (and takes over).
      const args = [input.fingerprint, input.token, input.leaseMs, input.retentionMs];
      result = toClaimResult(input.scope, await script('claim', key, args));
    }
    // Only a winning claim wrote anything; a replay never waits for replicas.
    if (wait && result.kind === 'claimed') {
      const missing = shortfall('the claim', await waitForReplicas(client, wait, key));
      if (missing) throw missing;
    }
    return result;
  };

  const store: RedisStore = {
    name: 'redis',
    capabilities: { transactions: false, nativeTtl: true },
    prefix,
    keyOf,

    claim: (input) =>
      guard('claim', () => {
        const key = keyOf(input.scope);
        const ttlMs = Math.max(input.leaseMs, input.retentionMs);
        // One native command claims an absent key or answers what it holds; no script runs.
        return setNxGet(key, freshClaimJson(input, ttlMs), ttlMs).then((held) => {
          if (held !== null && !isInProgress(held)) return { kind: 'existing', record: toRecord(input.scope, held, -1) } as const;
          return held === null && !wait ? FRESH_CLAIM : judgeClaim(input, key, held);
        });
      }),

    complete: (input) =>
      guard('complete', async () => {
        const key = keyOf(input.scope);
        const id = `${key}\n${input.token}`;
        const { reply, acknowledged } = await write('complete', key, [
          input.token,
          input.state,
          // The engine's JSON of the response when it attached it (this store is text-only): no second serialization.
          storedResponseJson(input.response),
          input.retentionMs,
        ]);
        const answer = toCompleteReply(reply);
        if (answer === 'fence_lost' || (answer === 'completed_by_token' && !unconfirmed.has(id))) return 'fence_lost';
        const missing = shortfall('the outcome', acknowledged);
        if (missing) {
          remember(id);
          throw missing;
        }
        unconfirmed.delete(id);
        return 'ok';
      }),

    release: (input) =>
      guard('release', async () => toFenceResult(await script('release', keyOf(input.scope), [input.token]))),

    extend: (input) =>
      guard('extend', async () => {
        const { reply, acknowledged } = await write('extend', keyOf(input.scope), [input.token, input.leaseMs]);
        const result = toFenceResult(reply);
        const missing = result === 'ok' ? shortfall('the lease extension', acknowledged) : undefined;
        if (missing) throw missing;
        return result;
      }),

    get: (scope) =>
      guard('get', async () => {
        const reply = await script('get', keyOf(scope), []);
        return reply === null ? undefined : toExisting(scope, reply);
      }),

    // Redis deletes expired keys itself, and an expired key is already absent to every reader.
    purgeExpired: async () => 0,

    async close() {
      unconfirmed.clear();
    },
  };
  // It reads nothing of a response but its JSON text, so the engine need not hand it a parsed-back copy.
  markTextOnly(store);
  return store;
}
