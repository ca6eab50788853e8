import { OncelyError } from '../errors.js';
import { type TraceApiLike, withConsumerSpan } from '../observability/trace-context.js';
import { type MessageProblem, parseBrokerMessage } from '../outbox/broker-message.js';
import type { OutboxEvent } from '../outbox/outbox-event.js';
import { type BackoffOptions, fullJitter } from '../retry/full-jitter.js';
import type { InboxOutcome } from './inbox.js';

/** One broker delivery, as a consumer hands it to {@link handleDelivery}. */
export interface BrokerDelivery {
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  /** 1 for the first delivery of the message. */
  readonly delivery: number;
}

/** What a consumer does next with a delivery. */
export type DeliveryVerdict =
  /** Applied or recognised: acknowledge. */
  | { readonly kind: 'handled'; readonly event: OutboxEvent; readonly outcome: InboxOutcome }
  /** Not an oncely event: park it, never retry. */
  | { readonly kind: 'malformed'; readonly problem: MessageProblem }
  /** The handler threw: redeliver after `retryInMs`, holding later messages back. */
  | { readonly kind: 'retry'; readonly event: OutboxEvent; readonly error: unknown; readonly retryInMs: number }
  /** The handler threw on the last allowed delivery: park it and acknowledge. */
  | { readonly kind: 'exhausted'; readonly event: OutboxEvent; readonly error: unknown };

/** How {@link handleDelivery} runs the handler. */
export interface DeliveryPolicy {
  readonly handle: (event: OutboxEvent) => Promise<InboxOutcome>;
  /** Deliveries allowed before the message is parked; a delivery past it is parked unhandled. */
  readonly maxDeliver: number;
  /** Redelivery delay after a failure: `fullJitter(delivery - 1, backoff)`. */
  readonly backoff: BackoffOptions;
  readonly random: () => number;
  /** Where the consumer span comes from; `undefined` for none. */
  readonly trace: TraceApiLike | undefined;
  /** Span name and attributes, e.g. `billing process`. */
  readonly span: { readonly name: string; readonly attributes: Record<string, string | number | boolean> };
}

/** Exponents past this only ever hit the cap. */
const MAX_EXPONENT = 30;

/**
 * The broker-independent half of a consumer: reads a delivery back into an event and runs the handler
 * (its inbox) in a consumer span linked to the producer's trace context, then says what to do with
 * the message. A handler answering anything but `processed` or `duplicate` counts as a failure
 * (`invalid_state`). A message delivered more than `maxDeliver` times (its consumers kept dying) is
 * parked without running the handler again.
 */
export async function handleDelivery(message: BrokerDelivery, policy: DeliveryPolicy): Promise<DeliveryVerdict> {
  const parsed = parseBrokerMessage(message.body, message.headers);
  if (parsed.kind === 'malformed') return parsed;
  const { event } = parsed;
  if (message.delivery > policy.maxDeliver) {
    return { kind: 'exhausted', event, error: new OncelyError('invalid_state', `oncely: delivered ${message.delivery} times, over maxDeliver ${policy.maxDeliver}`) };
  }
  try {
    const attributes = { ...policy.span.attributes, 'messaging.message.id': event.eventId, 'oncely.event_type': event.eventType };
    const outcome = await withConsumerSpan(policy.trace, { name: policy.span.name, headers: event.headers, attributes }, () => policy.handle(event));
    if (outcome !== 'processed' && outcome !== 'duplicate') {
      throw new OncelyError('invalid_state', `oncely: the handler must resolve 'processed' or 'duplicate', got ${String(outcome)}`);
    }
    return { kind: 'handled', event, outcome };
  } catch (error) {
    if (message.delivery >= policy.maxDeliver) return { kind: 'exhausted', event, error };
    return { kind: 'retry', event, error, retryInMs: fullJitter(Math.min(message.delivery - 1, MAX_EXPONENT), policy.backoff, policy.random) };
  }
}
