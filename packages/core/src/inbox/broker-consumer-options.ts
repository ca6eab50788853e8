import type { Clock } from '../clock.js';
import { type LoopOwnerOptions, loopOwnerDefaults } from '../loop/loop-owner-options.js';
import type { TraceOption } from '../observability/trace-context.js';
import type { BackoffOptions } from '../retry/full-jitter.js';
import type { BrokerConsumerEvent } from './broker-consumer-events.js';

/**
 * The options every broker consumer (NATS JetStream, RabbitMQ, Redis Streams) takes besides its
 * connection, names and handler; each consumer's options extend it.
 */
export interface BrokerConsumerOptions<Event = BrokerConsumerEvent> extends LoopOwnerOptions<Event> {
  /** Retry delay after a handler failure, and pause after a broker failure (default base 100 ms, cap 30 000 ms). */
  readonly backoff?: BackoffOptions;
  /** Consumer spans linked to the producer's trace context: `@opentelemetry/api` if installed (default), a copy of it, or `false`. */
  readonly trace?: TraceOption;
}

/** {@link BrokerConsumerOptions} with the defaults every consumer shares applied. */
export interface ResolvedBrokerConsumerOptions {
  readonly backoff: BackoffOptions;
  readonly clock: Clock;
  readonly random: () => number;
}

/** The defaults of {@link BrokerConsumerOptions}; the backoff is checked where the consumer's loop is made. */
export function resolveBrokerConsumerOptions<Event>(options: BrokerConsumerOptions<Event>): ResolvedBrokerConsumerOptions {
  return { backoff: options.backoff ?? { baseMs: 100, capMs: 30_000 }, ...loopOwnerDefaults(options) };
}
