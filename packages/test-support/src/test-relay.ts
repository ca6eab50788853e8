import type { InboxOutcome, OutboxEvent } from '@oncely/core/adapter';
import { createRelay, type Relay, type RelayOptions } from '@oncely/core/outbox';

/**
 * A relay as the broker tests run it: quick to poll, retry and take over (lease 1 s), retrying an
 * event up to 1 000 times, no stats, no purge; `options` override any of it.
 */
export function testRelay(options: Pick<RelayOptions, 'source' | 'publisher' | 'id'> & Partial<RelayOptions>): Relay {
  return createRelay({
    batchSize: 100,
    leaseMs: 1_000,
    pollIntervalMs: 100,
    maxAttempts: 1_000,
    backoff: { baseMs: 50, capMs: 1_000 },
    errorBackoff: { baseMs: 50, capMs: 1_000 },
    statsIntervalMs: 0,
    purge: false,
    ...options,
  });
}

/** The inbox transaction's handle, as the business write uses it. */
export interface ConsumerTx {
  query(text: string, params?: readonly unknown[]): Promise<unknown>;
}

/** What the tests need of a PostgreSQL inbox. */
export interface InboxLike {
  run(input: { consumer: string; eventId: string }, fn: (tx: ConsumerTx) => Promise<unknown>): Promise<InboxOutcome>;
}

/** The consumer's business write: one row of `"<schema>".applied` per event, in the order applied. */
export const insertApplied = (tx: ConsumerTx, schema: string, consumer: string, event: OutboxEvent) =>
  tx.query(`INSERT INTO "${schema}".applied (consumer, event_id, aggregate_id, aggregate_seq) VALUES ($1, $2, $3, $4)`, [
    consumer,
    event.eventId,
    event.aggregateId,
    event.aggregateSeq,
  ]);

/** One relay round over `source` with `publisher`: the batch, and the errors of the events it failed. */
export async function relayOnce(source: RelayOptions['source'], publisher: RelayOptions['publisher']) {
  const failures: unknown[] = [];
  const relay = createRelay({
    source,
    publisher,
    purge: false,
    onEvent: (event) => event.type === 'outbox_publish_failed' && failures.push(event.error),
  });
  return { batch: await relay.runOnce(), failures };
}
