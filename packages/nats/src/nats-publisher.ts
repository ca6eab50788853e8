import { OncelyError } from '@oncely/core';
import { integerOption, invalidOption, type OutboxEvent, type PublishOutcome, type Publisher, partitionOf, toBrokerMessage } from '@oncely/core/adapter';
import { jetstream } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';

/** Options of {@link natsPublisher}. */
export interface NatsPublisherOptions {
  /** A connection you own (`connect()` of `@nats-io/transport-node`): the publisher never closes it. */
  readonly connection: NatsConnection;
  /**
   * The subject, or a function choosing one per event. With `buckets`, the subject is
   * `<subject>.<bucket>` where the bucket is `partitionOf(aggregateId, buckets)`: every event of an
   * aggregate shares a subject, so a consumer per bucket applies them in order.
   */
  readonly subject: string | ((event: OutboxEvent) => string);
  /** How many bucket subjects to spread aggregates over (default: none, `subject` as given). */
  readonly buckets?: number;
  /** The stream that must store the events: an ack from another stream is refused (default: any). */
  readonly stream?: string;
  /** How long to wait for each stream ack (default 5 000 ms). */
  readonly timeoutMs?: number;
}

/** The headers NATS itself reads: a caller's header of the same name would be overwritten. */
const MSG_ID = 'Nats-Msg-Id';

/**
 * A {@link Publisher} that publishes each event to JetStream with `Nats-Msg-Id` set to its event id,
 * so the stream's duplicate window drops what a relay republishes after dying between the ack and the
 * mark. An event counts as published only on the stream's ack (stored, replicated as the stream is);
 * a missing stream, an ack timeout, a header NATS cannot carry or a message over the server's
 * `max_payload` fails the event, which stays in the outbox. The event's headers (trace context)
 * travel as NATS headers.
 */
export function natsPublisher(options: NatsPublisherOptions): Publisher {
  const { connection, subject, stream } = options;
  if (!connection || typeof connection.publish !== 'function') throw invalidOption('oncely/nats', 'natsPublisher needs a NatsConnection');
  if (typeof subject !== 'function' && (typeof subject !== 'string' || subject.length === 0)) {
    throw invalidOption('oncely/nats', 'subject must be a non-empty string or a function of the event');
  }
  const buckets = options.buckets === undefined ? undefined : integerOption('oncely/nats: buckets', options.buckets);
  const timeout = integerOption('oncely/nats: timeoutMs', options.timeoutMs ?? 5_000);
  const base = typeof subject === 'string' ? () => subject : subject;
  const subjectOf = buckets === undefined ? base : (event: OutboxEvent) => `${base(event)}.${partitionOf(event.aggregateId, buckets)}`;
  const js = jetstream(connection);

  async function publishOne(event: OutboxEvent, signal: AbortSignal): Promise<PublishOutcome> {
    try {
      const to = subjectOf(event);
      const maxPayload = connection.info?.max_payload ?? 1_048_576;
      const message = toBrokerMessage(event, maxPayload);
      const headers = natsHeaders();
      for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
      // Header lines count against max_payload too.
      const headerBytes = Object.entries(message.headers).reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
      if (message.body.byteLength + headerBytes + MSG_ID.length + event.eventId.length > maxPayload) {
        throw new OncelyError('invalid_event', `oncely/nats: event ${event.eventId} with its headers is over the server's max_payload of ${maxPayload} bytes`);
      }
      signal.throwIfAborted();
      const ack = await js.publish(to, message.body, {
        msgID: event.eventId,
        headers,
        timeout,
        ...(stream === undefined ? {} : { expect: { streamName: stream } }),
      });
      if (stream !== undefined && ack.stream !== stream) throw new OncelyError('invalid_state', `oncely/nats: ${to} is stored by ${ack.stream}, not ${stream}`);
      return { kind: 'published' };
    } catch (error) {
      return { kind: 'failed', error };
    }
  }

  return {
    name: 'nats-jetstream',
    // Each event of a batch is of another aggregate: they may be in flight together.
    publish: (events, signal) => Promise.all(events.map((event) => publishOne(event, signal))),
  };
}
