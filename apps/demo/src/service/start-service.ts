import { createCompleter } from '@oncely/core';
import { createRelay, type Relay } from '@oncely/core/outbox';
import { type BillingConsumer, startBillingConsumer } from '../billing/billing-consumer.js';
import { queuePublisher } from '../billing/queue-publisher.js';
import type { ServiceConfig } from '../cli/service-config.js';
import { type Database, openDatabase } from '../database/database.js';
import { armedFaults } from '../faults/armed-faults.js';
import { createCounters } from '../observability/counters.js';
import { createTimeline } from '../observability/timeline.js';
import { PROVIDER_PAYMENT, providerPayment } from '../payments/provider-payment.js';
import type { Backend } from './backend.js';
import { FLOW_LEASE_MS, flowRetentionMs, openBackend } from './open-backend.js';
import { buildServiceApp } from './service-app.js';

/** A running payments service. */
export interface RunningService {
  /** The port it listens on. */
  readonly port: number;
  /** Stops accepting requests, lets the relay and billing finish their round, closes every connection. */
  close(): Promise<void>;
}

/**
 * Opens the database and the oncely backend, starts the outbox relay and the billing consumer, and
 * listens. Everything it opened is closed again if a later step fails.
 */
export async function startService(config: ServiceConfig): Promise<RunningService> {
  const startedAt = new Date();
  const counters = createCounters();
  const timeline = createTimeline();
  const faults = armedFaults();
  const opened: (() => Promise<void>)[] = [];
  const closeAll = async () => {
    for (const close of opened.splice(0).reverse()) await close().catch(() => undefined);
  };
  try {
    const database: Database = await openDatabase(config.database, { reset: config.reset });
    opened.push(() => database.close());
    const backend: Backend = await openBackend(config, database, { onEngineEvent: counters.onEngineEvent });
    opened.push(() => backend.close());

    let providerUrl = '';
    const payment = providerPayment({ providerUrl: () => providerUrl, faults, enqueue: backend.enqueue });
    const { app, inFlight } = await buildServiceApp({
      providerPayment: payment,
      database,
      backend,
      faultsEnabled: config.faults,
      faults,
      counters,
      timeline,
      store: config.store,
      startedAt,
    });
    const beforeCrash = () => inFlight.whenIdle();
    const relay: Relay = createRelay({
      source: backend.outbox,
      publisher: queuePublisher(database, faults, beforeCrash),
      leaseMs: config.relayLeaseMs,
      pollIntervalMs: 100,
      statsIntervalMs: 0,
      backoff: { baseMs: 100, capMs: 2_000 },
      onEvent: (event) => {
        if (event.type === 'outbox_published') counters.count('events_published');
      },
    });
    relay.start();
    opened.push(() => relay.stop({ timeoutMs: 2_000 }));
    const consumer: BillingConsumer = startBillingConsumer({
      database,
      inbox: backend.inbox,
      faults,
      beforeCrash,
      onOutcome: (outcome) => counters.count(outcome === 'processed' ? 'events_consumed' : 'consumer_duplicates'),
    });
    opened.push(() => consumer.stop());
    // Closed first: no new requests while the background work winds down.
    opened.push(() => app.close());
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    providerUrl = `http://${config.host}:${port}/v1/provider/charges`;
    // Finishes provider payments whose process died mid-flow, from their last recovery point.
    const completer = createCompleter({ store: backend.flows.store, flows: { [PROVIDER_PAYMENT]: payment }, leaseMs: FLOW_LEASE_MS, retentionMs: flowRetentionMs(config), intervalMs: 250 });
    await completer.start();
    opened.push(() => completer.stop());
    return { port, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
