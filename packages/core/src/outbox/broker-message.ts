import { OncelyError } from '../errors.js';
import { integerOption } from '../options/option-checks.js';
import { checkEventHeaders } from './event-headers.js';
import type { OutboxEvent } from './outbox-event.js';

/** What a broker message could not be turned into an event for. */
export type MessageProblem = 'not_json' | 'missing_field' | 'bad_sequence' | 'bad_date' | 'bad_headers';

/** A broker message read back: an event, or why it is not one. */
export type ParsedMessage =
  | { readonly kind: 'event'; readonly event: OutboxEvent }
  | { readonly kind: 'malformed'; readonly problem: MessageProblem };

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The body and headers of an event as a broker message (NATS, RabbitMQ): the event as JSON (ISO
 * `createdAt`) and its headers, checked. Throws `invalid_event` for a header a broker cannot carry
 * or a body over `maxBytes`, so the relay reschedules the event instead of marking it published.
 */
export function toBrokerMessage(event: OutboxEvent, maxBytes: number): { body: Uint8Array; headers: Readonly<Record<string, string>> } {
  const headers = checkEventHeaders('invalid_event', event.headers) ?? {};
  const body = encoder.encode(
    JSON.stringify({
      eventId: event.eventId,
      aggregateType: event.aggregateType,
      aggregateId: event.aggregateId,
      aggregateSeq: event.aggregateSeq,
      eventType: event.eventType,
      payload: event.payload,
      createdAt: event.createdAt.toISOString(),
    }),
  );
  if (body.byteLength > maxBytes) {
    throw new OncelyError('invalid_event', `oncely: event ${event.eventId} is ${body.byteLength} bytes, over the broker's limit of ${maxBytes}`);
  }
  return { body, headers };
}

const text = (value: unknown) => typeof value === 'string' && value.length > 0;

/** Reads a body written by {@link toBrokerMessage} (and the message's headers) back into an event. */
export function parseBrokerMessage(body: Uint8Array, headers: Readonly<Record<string, unknown>> = {}): ParsedMessage {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(decoder.decode(body)) as Record<string, unknown>;
  } catch {
    return { kind: 'malformed', problem: 'not_json' };
  }
  if (typeof raw !== 'object' || raw === null || !('payload' in raw)) return { kind: 'malformed', problem: 'missing_field' };
  if (![raw.eventId, raw.aggregateType, raw.aggregateId, raw.eventType, raw.createdAt].every(text)) {
    return { kind: 'malformed', problem: 'missing_field' };
  }
  const aggregateSeq = raw.aggregateSeq;
  if (typeof aggregateSeq !== 'number' || !Number.isSafeInteger(aggregateSeq) || aggregateSeq < 1) return { kind: 'malformed', problem: 'bad_sequence' };
  const createdAt = new Date(raw.createdAt as string);
  if (Number.isNaN(createdAt.getTime())) return { kind: 'malformed', problem: 'bad_date' };
  let checked: Readonly<Record<string, string>> | undefined;
  try {
    checked = checkEventHeaders('invalid_event', headers);
  } catch {
    return { kind: 'malformed', problem: 'bad_headers' };
  }
  return {
    kind: 'event',
    event: {
      eventId: raw.eventId as string,
      aggregateType: raw.aggregateType as string,
      aggregateId: raw.aggregateId as string,
      aggregateSeq,
      eventType: raw.eventType as string,
      payload: raw.payload,
      createdAt,
      ...(checked ? { headers: checked } : {}),
    },
  };
}

/**
 * A stable partition number in `[0, partitions)` for an aggregate id (FNV-1a), for routing an
 * aggregate's events to one of several streams, subjects or queues.
 */
export function partitionOf(aggregateId: string, partitions: number): number {
  integerOption('oncely: partitions', partitions);
  let hash = 0x811c9dc5;
  for (let i = 0; i < aggregateId.length; i++) {
    hash ^= aggregateId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
