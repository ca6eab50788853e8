import { createRelay, type NewOutboxEvent, type OutboxEvent } from '@oncely/core/outbox';
import { memoryBroker } from '@oncely/testkit';
import type { OutboxUnderTest } from '@oncely/testkit';
import { until } from '../support/wait.js';
import { migrate, type PostgresDb, type PostgresOutbox, postgresOutbox, sqlDriver } from '../../src/index.js';

let tables = 0;

/** Migrates a fresh outbox table of its own into `schema` and returns its name. */
export async function freshOutboxTable(db: PostgresDb, schema: string): Promise<string> {
  const table = `outbox_${++tables}_${Math.random().toString(36).slice(2, 6)}`;
  await migrate(db, { schema, tables: { oncely_outbox: table } });
  return table;
}

/** Enqueues in a transaction of its own, committed before it resolves. */
export function enqueueCommitted(db: PostgresDb, outbox: PostgresOutbox, event: NewOutboxEvent): Promise<OutboxEvent> {
  return sqlDriver(db).transaction(async (tx) => ({ action: 'commit', value: await outbox.enqueue(tx, event) }));
}

interface RawRow {
  readonly published: boolean;
  readonly dead_lettered: boolean;
  readonly attempts: number;
  readonly lease_owner: string | null;
}

/** An outbox as the shared source contract tests it, reading raw rows behind the source's back. */
export async function outboxUnderTest(db: PostgresDb, schema: string, close?: () => Promise<void>): Promise<OutboxUnderTest> {
  const table = await freshOutboxTable(db, schema);
  const outbox = postgresOutbox({ db, schema, table });
  const driver = sqlDriver(db);
  return {
    source: outbox.source,
    enqueue: (event) => enqueueCommitted(db, outbox, event),
    async inspect(eventId) {
      const { rows } = await driver.query<RawRow>(
        `SELECT published_at IS NOT NULL AS published, dead_lettered_at IS NOT NULL AS dead_lettered, attempts, lease_owner
         FROM ${outbox.table} WHERE event_id = $1`,
        [eventId],
      );
      const row = rows[0];
      return row && { published: row.published, deadLettered: row.dead_lettered, attempts: Number(row.attempts), leaseOwner: row.lease_owner ?? undefined };
    },
    close,
  };
}

/**
 * Starts a relay whose poll interval is ten minutes, lets it go idle, then commits an event: the
 * relay must publish it well within the wait's timeout, which only the NOTIFY of the commit can do.
 */
export async function expectWokenByNotify(db: PostgresDb, schema: string): Promise<void> {
  const outbox = postgresOutbox({ db, schema, table: await freshOutboxTable(db, schema) });
  const broker = memoryBroker();
  let claims = 0;
  const source = {
    ...outbox.source,
    claim: (input: Parameters<typeof outbox.source.claim>[0]) => {
      claims += 1;
      return outbox.source.claim(input);
    },
  };
  const relay = createRelay({ source, publisher: broker.publisher(), pollIntervalMs: 600_000, statsIntervalMs: 0, purge: false });
  relay.start();
  try {
    await until('the relay found nothing and went idle', async () => claims >= 1);
    const event = await enqueueCommitted(db, outbox, { aggregateType: 'account', aggregateId: 'acct-1', eventType: 'account.credited.v1', payload: {} });
    await until('the woken relay published', async () => broker.log.length === 1);
    if (broker.log[0]?.eventId !== event.eventId) throw new Error('the relay published something else');
  } finally {
    await relay.stop();
  }
}
