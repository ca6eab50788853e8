import { integerOption } from '@oncely/core/adapter';
import { DiscardPolicy, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { type NatsConnection, nanos } from '@nats-io/nats-core';

/** Options of {@link ensureNatsStream}. */
export interface NatsStreamOptions {
  readonly name: string;
  /** Subjects it stores, e.g. `['orders.*', 'orders-dead']`. */
  readonly subjects: readonly string[];
  /** Republishes with the same `Nats-Msg-Id` within this window are dropped (default 120 000 ms). Keep it above a relay's `leaseMs`. */
  readonly duplicateWindowMs?: number;
  /** Copies in a cluster (default 1). */
  readonly replicas?: number;
}

/**
 * Creates a file-backed stream for outbox events, or updates its subjects and duplicate window.
 * Publishers never create streams: an event for a subject no stream stores fails and stays in the outbox.
 */
export async function ensureNatsStream(connection: NatsConnection, options: NatsStreamOptions): Promise<void> {
  const config = {
    name: options.name,
    subjects: [...options.subjects],
    duplicate_window: nanos(integerOption('oncely/nats: duplicateWindowMs', options.duplicateWindowMs ?? 120_000)),
    num_replicas: integerOption('oncely/nats: replicas', options.replicas ?? 1),
  };
  const jsm = await jetstreamManager(connection);
  try {
    await jsm.streams.info(options.name);
  } catch {
    await jsm.streams.add({ ...config, storage: StorageType.File, retention: RetentionPolicy.Limits, discard: DiscardPolicy.Old });
    return;
  }
  await jsm.streams.update(options.name, { subjects: config.subjects, duplicate_window: config.duplicate_window, num_replicas: config.num_replicas });
}

/** The bucket subjects `natsPublisher({ subject, buckets })` publishes to: `<subject>.0` … `<subject>.<buckets - 1>`. */
export function natsBucketSubjects(subject: string, buckets: number): string[] {
  return Array.from({ length: integerOption('oncely/nats: buckets', buckets) }, (_, bucket) => `${subject}.${bucket}`);
}
