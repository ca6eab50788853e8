import type { EngineEvent, Idempotency, IdempotencyStore } from '@oncely/core';
import type { Inbox, OutboxSource } from '@oncely/core/outbox';
import type { PostgresStore } from '@oncely/postgres';
import type { Queryable } from '../database/database.js';
import type { EnqueuePayment } from '../payments/charge.js';

/**
 * The oncely half of the service: the idempotency engine, the outbox and billing's inbox. `transaction`
 * keeps records in the business database and commits them with the charge; `lease` keeps them in Redis.
 */
export interface Backend {
  readonly engine: Idempotency<IdempotencyStore>;
  readonly mode: 'transaction' | 'lease';
  /** Multi-step payments (`flow`): their recovery points live in the business database, whatever keeps the records. */
  readonly flows: Idempotency<PostgresStore>;
  /** Writes the payment's event in the charge's transaction. */
  readonly enqueue: EnqueuePayment;
  /** Where the relay claims events from. */
  readonly outbox: OutboxSource;
  /** Billing's processed-messages table. */
  readonly inbox: Inbox<Queryable>;
  close(): Promise<void>;
}

/** What a backend reports to the service's counters. */
export interface BackendHooks {
  readonly onEngineEvent: (event: EngineEvent) => void;
}
