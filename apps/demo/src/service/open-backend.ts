import { createIdempotency, type Idempotency, type IdempotencyStore } from '@oncely/core';
import { migrate, postgresInbox, postgresOutbox, postgresStore } from '@oncely/postgres';
import { redisStore } from '@oncely/redis';
import { Redis } from 'ioredis';
import type { ServiceConfig } from '../cli/service-config.js';
import type { Database } from '../database/database.js';
import { PAYMENT_SUCCEEDED } from '../payments/charge.js';
import type { Backend, BackendHooks } from './backend.js';
import { deleteKeysWithPrefix } from './redis-reset.js';

/** How long a flow's owner holds it between recovery points (each one renews it). */
export const FLOW_LEASE_MS = 3_000;

/** The service's retention, but never shorter than a flow's lease. */
export const flowRetentionMs = (config: Pick<ServiceConfig, 'retentionMs'>): number => Math.max(config.retentionMs, FLOW_LEASE_MS);

/**
 * Creates oncely's tables in the demo's schema and wires the engine: records in the business database
 * (`transaction` mode: one commit for claim, charge, event and response) or in Redis (`lease` mode).
 */
export async function openBackend(config: ServiceConfig, database: Database, hooks: BackendHooks): Promise<Backend> {
  const db = database.driver.kind === 'pglite' ? database.driver.client : database.driver.pool;
  const schema = database.schema;
  await migrate(db, { schema });
  // A channel of our own: NOTIFY on a shared database must not wake other applications' relays.
  const outbox = postgresOutbox({ db, schema, channel: `${schema}_outbox` });
  const engineOptions = { leaseMs: config.leaseMs, retentionMs: config.retentionMs, onEvent: hooks.onEngineEvent };
  let engine: Idempotency<IdempotencyStore>;
  let close = async (): Promise<void> => undefined;
  if (config.records.kind === 'redis') {
    // Fail fast rather than queue commands while Redis is down: a payment must not wait on a dead store.
    const client = new Redis(config.records.url, { maxRetriesPerRequest: 1 });
    if (config.reset) await deleteKeysWithPrefix(client, config.records.prefix);
    engine = createIdempotency({ store: redisStore({ client, prefix: config.records.prefix }), ...engineOptions });
    close = async () => {
      await client.quit();
    };
  } else {
    engine = createIdempotency({ store: postgresStore({ db, schema }), ...engineOptions });
  }
  return {
    engine,
    // A short lease: after a crash the completer takes the flow over within seconds.
    flows: createIdempotency({ store: postgresStore({ db, schema }), ...engineOptions, leaseMs: FLOW_LEASE_MS, retentionMs: flowRetentionMs(config) }),
    mode: config.records.kind === 'redis' ? 'lease' : 'transaction',
    outbox: outbox.source,
    inbox: postgresInbox({ db, schema }),
    async enqueue(tx, payment) {
      // One aggregate per account: its events are published in the order they were charged.
      await outbox.enqueue(tx, {
        aggregateType: 'account',
        aggregateId: `${payment.tenant}/${payment.account_id}`,
        eventType: PAYMENT_SUCCEEDED,
        payload: payment,
      });
    },
    close,
  };
}
