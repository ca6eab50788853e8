import { checkEventHeaders, type OutboxEvent } from '@oncely/core/adapter';

/** The fields of a stream entry, in the order they are written. */
const FIELDS = ['eventId', 'aggregateType', 'aggregateId', 'aggregateSeq', 'eventType', 'payload', 'createdAt'] as const;

/** What a stream entry could not be turned into an event for. */
export type EntryProblem = 'deleted' | 'missing_field' | 'bad_sequence' | 'bad_payload' | 'bad_date' | 'bad_headers';

/** A stream entry read back: an event, or why it is not one. */
export type ParsedEntry =
  | { readonly kind: 'event'; readonly event: OutboxEvent }
  | { readonly kind: 'malformed'; readonly problem: EntryProblem; readonly fields: Readonly<Record<string, string>> };

/**
 * The XADD field list of an event: `eventId` (the consumers' deduplication identity), the aggregate,
 * its sequence, the type, the JSON payload, the ISO creation time and, when the event has headers
 * (its trace context), `headers` as JSON. Throws `invalid_event` for headers a broker cannot carry.
 */
export function toStreamFields(event: OutboxEvent): string[] {
  const headers = checkEventHeaders('invalid_event', event.headers);
  return [
    'eventId',
    event.eventId,
    'aggregateType',
    event.aggregateType,
    'aggregateId',
    event.aggregateId,
    'aggregateSeq',
    String(event.aggregateSeq),
    'eventType',
    event.eventType,
    'payload',
    JSON.stringify(event.payload),
    'createdAt',
    event.createdAt.toISOString(),
    ...(headers ? ['headers', JSON.stringify(headers)] : []),
  ];
}

/** Reads an entry's flat `[field, value, ...]` list (null when the entry was trimmed away) back into an event. */
export function parseStreamEntry(raw: readonly string[] | null): ParsedEntry {
  if (raw === null) return { kind: 'malformed', problem: 'deleted', fields: {} };
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) fields[raw[i]!] = raw[i + 1]!;
  const malformed = (problem: EntryProblem): ParsedEntry => ({ kind: 'malformed', problem, fields });
  if (FIELDS.some((name) => typeof fields[name] !== 'string' || fields[name] === '')) return malformed('missing_field');
  const aggregateSeq = Number(fields.aggregateSeq);
  if (!Number.isSafeInteger(aggregateSeq) || aggregateSeq < 1) return malformed('bad_sequence');
  const createdAt = new Date(fields.createdAt!);
  if (Number.isNaN(createdAt.getTime())) return malformed('bad_date');
  let payload: unknown;
  try {
    payload = JSON.parse(fields.payload!);
  } catch {
    return malformed('bad_payload');
  }
  let headers: Readonly<Record<string, string>> | undefined;
  try {
    headers = fields.headers === undefined ? undefined : checkEventHeaders('invalid_event', JSON.parse(fields.headers));
  } catch {
    return malformed('bad_headers');
  }
  return {
    kind: 'event',
    event: {
      eventId: fields.eventId!,
      aggregateType: fields.aggregateType!,
      aggregateId: fields.aggregateId!,
      aggregateSeq,
      eventType: fields.eventType!,
      payload,
      createdAt,
      ...(headers ? { headers } : {}),
    },
  };
}
