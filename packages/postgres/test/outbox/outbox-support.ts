import type { NewOutboxEvent, OutboxEvent } from '@oncely/core';
import type { OutboxUnderTest } from '../../../core/test/outbox/source-conformance.js';
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
