// The bodies of the relay and consumer processes the broker packages' tests fork and SIGKILL: a
// PostgreSQL outbox → a broker → a PostgreSQL inbox, the broker handed in as a transport. Each
// reports named points over IPC; the parent decides when it dies.
import type { InboxOutcome, OutboxEvent, Publisher } from '@oncely/core/adapter';
import type { RelayOptions } from '@oncely/core/outbox';
import pg from 'pg';
import { type ConsumerTx, type InboxLike, insertApplied, testRelay } from './test-relay.js';

/** A process's configuration: its one command-line argument, as JSON; the transport reads the rest. */
export interface ProcessConfig {
  readonly databaseUrl: string;
  readonly schema: string;
  /** The relay's id, and its pool's `application_name`. */
  readonly relayId: string;
  /** The consumer's name, and its pool's `application_name`. */
  readonly name: string;
  readonly pauseAt?: 'published' | 'applied';
  readonly batchSize?: number;
  readonly leaseMs?: number;
  readonly pollIntervalMs?: number;
  readonly [option: string]: unknown;
}

const config: ProcessConfig = JSON.parse(process.argv[2] ?? '{}');
const send = (message: Record<string, unknown>) => process.send?.(message);

/** A pool named for this process (tests kill its backends by `application_name`), whose lost connections are heard. */
function poolOf(name: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max, application_name: name });
  pool.on('error', () => undefined);
  return pool;
}

/** Ends the process gracefully when the parent sends `stop`. */
function onStop(stop: () => Promise<void>): void {
  process.on('message', async (message) => {
    if (message === 'stop') {
      await stop();
      process.exit(0);
    }
  });
}

/** The broker side of a relay process. */
export interface RelayTransport {
  readonly publisher: Publisher;
  /** Options this broker's relay runs with beyond the shared ones (e.g. `publishTimeoutMs`). */
  readonly relayOptions?: Partial<RelayOptions>;
  close(): Promise<void>;
}

/**
 * A relay: the outbox of `config.schema` → `transport`'s publisher. `config.pauseAt: 'published'`
 * holds the first batch the broker acknowledged before the outbox is told (point `published`).
 */
export async function relayProcess(parts: {
  outbox(pool: pg.Pool, config: ProcessConfig): { readonly source: RelayOptions['source'] };
  transport(config: ProcessConfig): Promise<RelayTransport>;
}): Promise<void> {
  const pool = poolOf(config.relayId, 4);
  const outbox = parts.outbox(pool, config);
  const transport = await parts.transport(config);
  const broker = transport.publisher;
  // The named point: the broker has acknowledged the batch, the outbox has not been told yet.
  const publisher: Publisher =
    config.pauseAt === 'published'
      ? {
          name: broker.name,
          async publish(events, signal) {
            await broker.publish(events, signal);
            send({ point: 'published', eventIds: events.map((event) => event.eventId) });
            return new Promise(() => undefined);
          },
        }
      : broker;
  const relay = testRelay({
    source: outbox.source,
    publisher,
    id: config.relayId,
    batchSize: config.batchSize ?? 100,
    leaseMs: config.leaseMs ?? 1_000,
    pollIntervalMs: config.pollIntervalMs ?? 100,
    ...transport.relayOptions,
  });
  onStop(async () => {
    await relay.stop();
    await transport.close();
    await pool.end();
  });
  relay.start();
  send({ point: 'started' });
}

/** Applies one event in the inbox's transaction: the consumer's business write. */
export type Apply = (tx: ConsumerTx, event: OutboxEvent, config: ProcessConfig) => Promise<unknown>;

/** The broker side of a consumer process: its consumers, each applying through `handle`. */
export interface ConsumerTransport {
  readonly consumers: readonly { start(): Promise<void>; stop(): Promise<void> }[];
  close(): Promise<void>;
}

/**
 * A consumer service: `transport`'s consumers apply each event through the inbox of
 * `config.schema` in one transaction with its business row (`apply`, by default a row of `applied`),
 * then acknowledge. Reports `duplicate` for each redelivery the inbox refused;
 * `config.pauseAt: 'applied'` holds the first event committed before its acknowledgement (point `applied`).
 */
export async function consumerProcess(parts: {
  inbox(pool: pg.Pool, config: ProcessConfig): InboxLike;
  transport(config: ProcessConfig, handle: (event: OutboxEvent) => Promise<InboxOutcome>): Promise<ConsumerTransport>;
  apply?: Apply;
}): Promise<void> {
  const pool = poolOf(config.name, 6);
  const inbox = parts.inbox(pool, config);
  const apply: Apply = parts.apply ?? ((tx, event) => insertApplied(tx, config.schema, config.name, event));
  let paused = false;
  const handle = async (event: OutboxEvent): Promise<InboxOutcome> => {
    const outcome = await inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx) => apply(tx, event, config));
    if (outcome === 'duplicate') send({ point: 'duplicate', eventId: event.eventId });
    // The named point: the inbox transaction has committed, the message is not acknowledged yet.
    if (config.pauseAt === 'applied' && outcome === 'processed' && !paused) {
      paused = true;
      send({ point: 'applied', eventId: event.eventId });
      await new Promise(() => undefined);
    }
    return outcome;
  };
  const transport = await parts.transport(config, handle);
  onStop(async () => {
    await Promise.all(transport.consumers.map((consumer) => consumer.stop()));
    await transport.close();
    await pool.end();
  });
  await Promise.all(transport.consumers.map((consumer) => consumer.start()));
  send({ point: 'started' });
}
