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
import type { Channel, ConsumeMessage } from 'amqplib';
import type { RabbitConnection } from './rabbit-queues.js';
import { traceApi } from './trace/otel-api.js';

/** Where an event came from, for handlers that log or trace. */
export interface RabbitDelivery {
  readonly queue: string;
  readonly deliveryTag: number;
  /** 1 for the first delivery. */
  readonly delivery: number;
}

/**
 * Applies one event and says whether it was new. Run your inbox in it:
 * `(event) => inbox.run({ consumer: 'billing', eventId: event.eventId }, (tx) => apply(tx, event))`.
 * Throwing retries the message after a backoff, before any later message of its queue.
 */
export type RabbitHandler = (event: OutboxEvent, delivery: RabbitDelivery) => Promise<InboxOutcome>;

/** Options of {@link rabbitConsumer}. */
export interface RabbitConsumerOptions extends BrokerConsumerOptions {
  /** Where the consumer opens its channel (reopened after the broker closed it). */
  readonly connection: RabbitConnection;
  /** The queue to consume, e.g. one bucket queue `orders.3` (see `ensureRabbitQueues`); it must exist. */
  readonly queue: string;
  /** This consumer's name, for events and spans. */
  readonly consumer: string;
  readonly handle: RabbitHandler;
  /** Messages delivered ahead of the one being applied (default 20). They are applied one at a time, in queue order. */
  readonly prefetch?: number;
  /** Deliveries (broker redeliveries and retries here) before a message is rejected to the queue's dead-letter exchange (default 5). */
  readonly maxDeliver?: number;
  /** How long one round waits for a message before looking again (default 1 000 ms). */
  readonly idleMs?: number;
}

/** A queue consumer; see {@link rabbitConsumer}. */
export interface RabbitConsumer {
  readonly consumer: string;
  readonly status: LoopStatus;
  /** Opens a channel and starts consuming; rejects if the queue is missing or the broker unreachable. */
  start(): Promise<void>;
  /** Lets the message in flight finish and acknowledges it, then closes the channel (unacked messages go back to the queue). */
  stop(): Promise<void>;
}

const positive = (name: string, value: number) => integerOption(`oncely/rabbitmq: ${name}`, value);

/** A message's headers as strings; AMQP values of other types are not oncely headers. */
function headersOf(message: ConsumeMessage): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
    if (typeof value === 'string' && !name.startsWith('x-')) found[name] = value;
  }
  return found;
}

/**
 * Consumes a queue with manual acknowledgements: each message is acknowledged only after `handle`
 * resolved (its inbox transaction committed). A consumer that dies before the ack leaves its
 * unacknowledged messages to the broker, which requeues them for the next consumer, whose inbox
 * answers `duplicate`: effectively once. Messages are applied one at a time in delivery order; a
 * failing one is retried with backoff before any later one, and after `maxDeliver` deliveries
 * (counting the quorum queue's `x-delivery-count`) it is rejected to the dead-letter exchange. With
 * the single active consumer of `ensureRabbitQueues`, an aggregate's events are applied in order.
 */
export function rabbitConsumer(options: RabbitConsumerOptions): RabbitConsumer {
  const { connection, queue, consumer, handle } = options;
  const { backoff, clock, random } = resolveBrokerConsumerOptions(options);
  if (!connection || typeof connection.createChannel !== 'function') {
    throw invalidOption('oncely/rabbitmq', 'rabbitConsumer needs an amqplib connection (ChannelModel)');
  }
  if (typeof handle !== 'function') throw invalidOption('oncely/rabbitmq', 'rabbitConsumer needs a handle function');
  assertIdentifier('invalid_option', 'queue', queue);
  assertIdentifier('invalid_option', 'consumer', consumer);
  const prefetch = positive('prefetch', options.prefetch ?? 20);
  const maxDeliver = positive('maxDeliver', options.maxDeliver ?? 5);
  const idleMs = positive('idleMs', options.idleMs ?? 1_000);

  let channel: Channel | undefined;
  let trace: Awaited<ReturnType<typeof traceApi>>;
  let stage: ConsumerStage = 'read';
  // Deliveries of the open channel, in order; a closed channel's are the broker's again.
  let buffered: ConsumeMessage[] = [];
  let arrived: (() => void) | undefined;
  // Failed attempts here, per delivery tag of the open channel.
  const retries = new Map<number, number>();
  const emit = eventEmitter<BrokerConsumerEvent, 'consumer'>(options.onEvent, clock, { consumer });
  const storageCall = storageGuard('rabbitmq');
  const rabbit = <T>(at: ConsumerStage, call: () => Promise<T>): Promise<T> => {
    stage = at;
    return storageCall(`consumer.${at}`, call);
  };

  async function subscribe(): Promise<void> {
    const opened = await connection.createChannel();
    const closed = () => {
      if (channel !== opened) return;
      channel = undefined;
      buffered = [];
      retries.clear();
      arrived?.();
    };
    opened.on('close', closed);
    opened.on('error', closed);
    try {
      await opened.checkQueue(queue);
      await opened.prefetch(prefetch);
      channel = opened;
      await opened.consume(queue, (message) => {
        if (!message || channel !== opened) return;
        buffered.push(message);
        arrived?.();
      });
    } catch (error) {
      channel = undefined;
      await opened.close().catch(() => undefined);
      throw error;
    }
  }

  /** The next delivery, or `undefined` after `idleMs` (or when the channel closed). */
  async function next(): Promise<ConsumeMessage | undefined> {
    if (buffered.length === 0 && !loop.stopSignal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          loop.stopSignal.removeEventListener('abort', done);
          arrived = undefined;
          resolve();
        };
        const timer = setTimeout(done, idleMs);
        arrived = done;
        loop.stopSignal.addEventListener('abort', done, { once: true });
      });
    }
    return buffered[0];
  }

  async function round(): Promise<void> {
    if (!channel) await rabbit('group', subscribe);
    const open = channel!;
    const message = await rabbit('read', next);
    if (!message || channel !== open) return;
    const tag = message.fields.deliveryTag;
    // The broker counts deliveries on quorum queues; a retry here counts as one more.
    const counted = Number(message.properties.headers?.['x-delivery-count'] ?? (message.fields.redelivered ? 1 : 0));
    const delivery = counted + 1 + (retries.get(tag) ?? 0);
    const subject = { source: queue, deliveryId: String(tag), delivery };
    const verdict = await handleDelivery(
      { body: message.content, headers: headersOf(message), delivery },
      {
        handle: (event) => handle(event, { queue, deliveryTag: tag, delivery }),
        maxDeliver,
        backoff,
        random,
        trace,
        span: { name: `${queue} process`, attributes: { 'messaging.system': 'rabbitmq', 'messaging.destination.name': queue } },
      },
    );
    if (channel !== open) return; // the broker took it back: it comes again, to whichever consumer is active
    if (verdict.kind === 'retry') {
      retries.set(tag, (retries.get(tag) ?? 0) + 1);
      emit({ type: 'message_handler_failed', ...subject, eventId: verdict.event.eventId, retryInMs: verdict.retryInMs, error: verdict.error });
      await loop.pause(verdict.retryInMs);
      return;
    }
    buffered.shift();
    retries.delete(tag);
    if (verdict.kind === 'handled') {
      await rabbit('ack', async () => open.ack(message));
      const type = verdict.outcome === 'processed' ? 'message_processed' : 'message_duplicate';
      emit({ type, ...subject, eventId: verdict.event.eventId, eventType: verdict.event.eventType });
      return;
    }
    // Rejected without requeue: the queue's dead-letter exchange takes it.
    await rabbit('deadLetter', async () => open.nack(message, false, false));
    if (verdict.kind === 'malformed') emit({ type: 'message_malformed', ...subject, problem: verdict.problem });
    else emit({ type: 'message_dead_lettered', ...subject, eventId: verdict.event.eventId, error: verdict.error });
  }

  const loop = backgroundLoop({
    label: `oncely/rabbitmq: consumer ${consumer}`,
    kind: 'consumer',
    clock,
    random,
    backoff,
    round,
    onFailure(error, retryInMs) {
      emit({ type: 'consumer_error', stage, error, retryInMs });
    },
    async afterRounds() {
      const open = channel;
      channel = undefined;
      await open?.close().catch(() => undefined);
      emit({ type: 'consumer_stopped' });
    },
  });

  return {
    consumer,
    get status() {
      return loop.status;
    },
    start: () =>
      loop.start(async () => {
        trace = await traceApi(options.trace);
        await rabbit('group', subscribe);
        emit({ type: 'consumer_started' });
      }),
    stop: () => loop.stop(),
  };
}
