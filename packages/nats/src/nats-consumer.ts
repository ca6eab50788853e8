import type { ConsumerStage } from '@oncely/core';
import {
  assertIdentifier,
  backgroundLoop,
  type BrokerConsumerEvent,
  type BrokerConsumerOptions,
  eventEmitter,
  handleDelivery,
  type InboxOutcome,
  integerOption,
  invalidOption,
  type LoopStatus,
  type OutboxEvent,
  resolveBrokerConsumerOptions,
  storageGuard,
} from '@oncely/core/adapter';
import { AckPolicy, type Consumer, DeliverPolicy, type JsMsg, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection, nanos } from '@nats-io/nats-core';
import { traceApi } from './trace/otel-api.js';

/** Where an event came from, for handlers that log or trace. */
export interface NatsDelivery {
  readonly stream: string;
  readonly durable: string;
  readonly subject: string;
  /** The message's sequence in the stream. */
  readonly seq: number;
  /** 1 for the first delivery. */
  readonly delivery: number;
}

/**
 * Applies one event and says whether it was new. Run your inbox in it:
 * `(event) => inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx) => apply(tx, event))`.
 * Throwing naks the message: it is redelivered, before any later message of its subject.
 */
export type NatsHandler = (event: OutboxEvent, delivery: NatsDelivery) => Promise<InboxOutcome>;

/** Options of {@link natsConsumer}. */
export interface NatsConsumerOptions extends BrokerConsumerOptions {
  /** A connection you own: the consumer never closes it. */
  readonly connection: NatsConnection;
  /** The stream the events are stored in. */
  readonly stream: string;
  /** The durable consumer's name, created if missing; consumers of one name share its messages. */
  readonly durable: string;
  /** The subject it reads, e.g. one bucket subject `orders.3` (see `natsBucketSubjects`). */
  readonly filterSubject: string;
  readonly handle: NatsHandler;
  /** Unacknowledged this long, a message is redelivered (JetStream `ack_wait`, default 30 000 ms). */
  readonly ackWaitMs?: number;
  /** Deliveries before a message is parked on `deadLetterSubject` (default 5; JetStream `max_deliver` is one more). */
  readonly maxDeliver?: number;
  /** Where exhausted and malformed messages are published (stream-acked, with an `Oncely-Error` header); a stream must store it. */
  readonly deadLetterSubject: string;
  /**
   * Messages delivered and not yet acknowledged (JetStream `max_ack_pending`, default 1). One keeps
   * the order of the subject under redelivery: a message is never applied before an earlier one
   * that is waiting to be redelivered. Raise it only when order does not matter.
   */
  readonly maxAckPending?: number;
  /** How long one pull waits for a message (default and least 1 000 ms). */
  readonly expiresMs?: number;
}

/** A durable pull consumer; see {@link natsConsumer}. */
export interface NatsConsumer {
  readonly durable: string;
  readonly status: LoopStatus;
  /** Creates the durable consumer (or checks it), then pulls in the background. Rejects if that setup fails. */
  start(): Promise<void>;
  /** Lets the message in flight finish and acknowledges it; resolves when the loop has ended. */
  stop(): Promise<void>;
}

const positive = (name: string, value: number) => integerOption(`oncely/nats: ${name}`, value);

/** A JetStream message's headers as a plain object, without the ones NATS sets for itself. */
function headersOf(message: JsMsg): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of message.headers?.keys() ?? []) {
    if (!name.toLowerCase().startsWith('nats-')) found[name] = message.headers!.get(name);
  }
  return found;
}

/**
 * Reads events from a JetStream durable pull consumer and acknowledges each message only after
 * `handle` resolved (its inbox transaction committed), so a consumer that dies between the commit
 * and the ack has its message redelivered after `ackWaitMs` and its inbox answers `duplicate`:
 * effectively once. A failing handler naks the message with backoff; after `maxDeliver` deliveries
 * the message is published to `deadLetterSubject` (stream-acked) and terminated. With
 * `maxAckPending` 1 the subject's messages are applied in stream order, redeliveries included, so an
 * aggregate routed to one bucket subject keeps its order whichever consumer of the durable applies it.
 */
export function natsConsumer(options: NatsConsumerOptions): NatsConsumer {
  const { connection, stream, durable, filterSubject, deadLetterSubject, handle } = options;
  const { backoff, clock, random } = resolveBrokerConsumerOptions(options);
  if (!connection || typeof connection.publish !== 'function') throw invalidOption('oncely/nats', 'natsConsumer needs a NatsConnection');
  if (typeof handle !== 'function') throw invalidOption('oncely/nats', 'natsConsumer needs a handle function');
  for (const [name, value] of Object.entries({ stream, durable, filterSubject, deadLetterSubject })) assertIdentifier('invalid_option', name, value);
  if (/[.*>\s]/.test(durable)) throw invalidOption('oncely/nats', 'durable must not contain ".", "*", ">" or spaces');
  const ackWaitMs = positive('ackWaitMs', options.ackWaitMs ?? 30_000);
  const maxDeliver = positive('maxDeliver', options.maxDeliver ?? 5);
  const maxAckPending = positive('maxAckPending', options.maxAckPending ?? 1);
  // JetStream refuses pulls that expire sooner than a second.
  const expiresMs = integerOption('oncely/nats: expiresMs', options.expiresMs ?? 1_000, 1_000);

  const js = jetstream(connection);
  let consumer: Consumer | undefined;
  let trace: Awaited<ReturnType<typeof traceApi>>;
  let stage: ConsumerStage = 'read';
  const emit = eventEmitter<BrokerConsumerEvent, 'consumer'>(options.onEvent, clock, { consumer: durable });
  const storageCall = storageGuard('nats');
  const nats = <T>(at: ConsumerStage, call: () => Promise<T>): Promise<T> => {
    stage = at;
    return storageCall(`consumer.${at}`, call);
  };

  /** Publishes a message to the dead-letter subject and waits for its stream's ack, then terminates the original. */
  async function park(message: JsMsg, reason: string): Promise<void> {
    await nats('deadLetter', async () => {
      const headers = natsHeaders();
      for (const [name, value] of Object.entries(headersOf(message))) headers.set(name, value);
      headers.set('Oncely-Error', reason.replace(/[\r\n]+/g, ' ').slice(0, 1_000));
      headers.set('Oncely-Source', `${stream}:${message.subject}:${message.seq}`);
      // The same message id twice (a consumer that died after parking): the dead-letter stream dedupes it.
      await js.publish(deadLetterSubject, message.data, { headers, msgID: `${stream}:${message.seq}` });
    });
    await nats('ack', () => message.ackAck().then(() => undefined));
  }

  async function round(): Promise<void> {
    const message = await nats('read', async () => (await consumer!.next({ expires: expiresMs })) ?? undefined);
    if (!message) return;
    const delivery = message.info.deliveryCount;
    const subject = { source: message.subject, deliveryId: String(message.seq), delivery };
    const verdict = await handleDelivery(
      { body: message.data, headers: headersOf(message), delivery },
      {
        handle: (event) => handle(event, { stream, durable, subject: message.subject, seq: message.seq, delivery }),
        maxDeliver,
        backoff,
        random,
        trace,
        span: { name: `${durable} process`, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': message.subject } },
      },
    );
    switch (verdict.kind) {
      case 'handled': {
        await nats('ack', () => message.ackAck().then(() => undefined));
        const type = verdict.outcome === 'processed' ? 'message_processed' : 'message_duplicate';
        emit({ type, ...subject, eventId: verdict.event.eventId, eventType: verdict.event.eventType });
        return;
      }
      case 'malformed':
        await park(message, `malformed: ${verdict.problem}`);
        emit({ type: 'message_malformed', ...subject, problem: verdict.problem });
        return;
      case 'exhausted':
        await park(message, verdict.error instanceof Error ? verdict.error.message : String(verdict.error));
        emit({ type: 'message_dead_lettered', ...subject, eventId: verdict.event.eventId, error: verdict.error });
        return;
      case 'retry':
        // Still pending to this durable: with maxAckPending 1 nothing later is delivered meanwhile.
        message.nak(verdict.retryInMs);
        emit({ type: 'message_handler_failed', ...subject, eventId: verdict.event.eventId, retryInMs: verdict.retryInMs, error: verdict.error });
        return;
    }
  }

  const loop = backgroundLoop({
    label: `oncely/nats: consumer ${durable}`,
    kind: 'consumer',
    clock,
    random,
    backoff,
    round,
    onFailure(error, retryInMs) {
      emit({ type: 'consumer_error', stage, error, retryInMs });
    },
    async afterRounds() {
      emit({ type: 'consumer_stopped' });
    },
  });

  return {
    durable,
    get status() {
      return loop.status;
    },
    start: () =>
      loop.start(async () => {
        trace = await traceApi(options.trace);
        await nats('group', async () => {
          const jsm = await jetstreamManager(connection);
          await jsm.consumers.add(stream, {
            durable_name: durable,
            ack_policy: AckPolicy.Explicit,
            deliver_policy: DeliverPolicy.All,
            filter_subject: filterSubject,
            ack_wait: nanos(ackWaitMs),
            // One more than ours: the last delivery is this consumer's chance to park the message.
            max_deliver: maxDeliver + 1,
            max_ack_pending: maxAckPending,
          });
          consumer = await js.consumers.get(stream, durable);
        });
        emit({ type: 'consumer_started' });
      }),
    stop: () => loop.stop(),
  };
}
