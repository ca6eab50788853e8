import { integerOption } from '@oncely/core/adapter';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';

/** The `wait` option: how many replicas must acknowledge a write, and for how long to wait. */
export interface ReplicaWait {
  /** Replicas that must hold the write before the store answers (`WAIT numreplicas`). */
  readonly replicas: number;
  /** Longest wait in milliseconds (`WAIT timeout`); 0 is refused because Redis reads it as forever. */
  readonly timeoutMs: number;
}

/** A command followed by WAIT: the command's reply and how many replicas acknowledged it. */
export interface ReplicatedReply {
  readonly reply: unknown;
  readonly acknowledged: number;
}

/** Validates the `wait` option; throws `invalid_option`. */
export function checkReplicaWait(wait: ReplicaWait | undefined): ReplicaWait | undefined {
  if (wait === undefined) return undefined;
  return {
    replicas: integerOption('oncely/redis: wait.replicas', wait?.replicas),
    timeoutMs: integerOption('oncely/redis: wait.timeoutMs', wait?.timeoutMs),
  };
}

/**
 * Sends the write queued by `queue` and `WAIT` in one pipeline. WAIT counts the writes of its own
 * connection, and a Cluster pipeline goes to the node of its keyed command, so WAIT always follows
 * the write it is meant to confirm. One round trip; the reply comes once replicas acknowledged or the
 * timeout passed.
 */
export async function writeThenWait(
  client: Redis | Cluster,
  wait: ReplicaWait,
  queue: (pipeline: ChainableCommander) => void,
): Promise<ReplicatedReply> {
  const pipeline = client.pipeline();
  queue(pipeline);
  pipeline.wait(wait.replicas, wait.timeoutMs);
  const results = await pipeline.exec();
  if (results?.length !== 2) throw new Error('the write and WAIT pipeline returned no results');
  const [[writeError, reply], [waitError, acknowledged]] = results as [[Error | null, unknown], [Error | null, unknown]];
  if (writeError) throw writeError;
  if (waitError) throw waitError;
  if (typeof acknowledged !== 'number') throw new Error(`unexpected WAIT reply: ${String(acknowledged)}`);
  return { reply, acknowledged };
}

/**
 * Waits for replicas to acknowledge the writes already sent on the connection that serves `key`: a
 * keyed read routes the pipeline to the key's node in a Cluster. Resolves to the replica count.
 */
export async function waitForReplicas(client: Redis | Cluster, wait: ReplicaWait, key: string): Promise<number> {
  const { acknowledged } = await writeThenWait(client, wait, (pipeline) => pipeline.exists(key));
  return acknowledged;
}

/** The cause of a StorageError when fewer replicas than required acknowledged a write. */
export function replicationShortfall(what: string, acknowledged: number, wait: ReplicaWait): Error {
  return new Error(
    `${what} reached the primary, but only ${acknowledged} of ${wait.replicas} replicas acknowledged it within ${wait.timeoutMs} ms`,
  );
}
