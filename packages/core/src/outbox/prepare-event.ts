import { isOncelyError, OncelyError } from '../errors.js';
import { canonicalize } from '../fingerprint/canonicalize.js';
import { checkEventHeaders } from './event-headers.js';
import { assertIdentifier } from './identifier.js';
import type { NewOutboxEvent } from './outbox-event.js';

/** A validated {@link NewOutboxEvent}, ready for an adapter to write. */
export interface PreparedOutboxEvent {
  readonly eventId: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  /** The caller's sequence, or `undefined` for the outbox to assign one. */
  readonly aggregateSeq: number | undefined;
  readonly eventType: string;
  /** The payload as JSON text (RFC 8785 canonical form). */
  readonly payloadJson: string;
  /** The captured trace context under the caller's headers, checked; `undefined` when there are none. */
  readonly headers: Readonly<Record<string, string>> | undefined;
}

/**
 * Validates an event before any storage is touched (adapters call it first in `enqueue`): identifiers
 * of 1–255 characters, a positive safe-integer sequence if one is given, and a payload with a faithful
 * JSON form, and headers brokers can carry. Throws an `invalid_event` {@link OncelyError}; fills in
 * a random UUID as `eventId`. `captured` (the active trace context, from `captureTraceHeaders`) is
 * merged under the caller's own headers.
 */
export function prepareOutboxEvent(event: NewOutboxEvent, captured?: Readonly<Record<string, string>>): PreparedOutboxEvent {
  if (typeof event !== 'object' || event === null) {
    throw new OncelyError('invalid_event', 'oncely: enqueue needs an event object');
  }
  const eventId = event.eventId ?? globalThis.crypto.randomUUID();
  assertIdentifier('invalid_event', 'eventId', eventId);
  assertIdentifier('invalid_event', 'aggregateType', event.aggregateType);
  assertIdentifier('invalid_event', 'aggregateId', event.aggregateId);
  assertIdentifier('invalid_event', 'eventType', event.eventType);
  const seq = event.aggregateSeq;
  if (seq !== undefined && (!Number.isSafeInteger(seq) || seq < 1)) {
    throw new OncelyError('invalid_event', `oncely: aggregateSeq must be a positive safe integer, got ${seq}`);
  }
  let payloadJson: string;
  try {
    payloadJson = canonicalize(event.payload);
  } catch (error) {
    if (!isOncelyError(error)) throw error;
    throw new OncelyError('invalid_event', `oncely: the event payload is not JSON: ${error.message}`, { cause: error });
  }
  const own = checkEventHeaders('invalid_event', event.headers);
  const headers = captured || own ? checkEventHeaders('invalid_event', { ...captured, ...own }) : undefined;
  return {
    eventId,
    aggregateType: event.aggregateType,
    aggregateId: event.aggregateId,
    aggregateSeq: seq,
    eventType: event.eventType,
    payloadJson,
    headers,
  };
}
