import { corruptRecord } from '../errors.js';
import { isObject, isPositiveInteger } from '../storage/answer-shapes.js';
import type { ClaimedEvent } from './outbox-event.js';
import type { OutboxClaimInput } from './outbox-source.js';

const isText = (value: unknown) => typeof value === 'string' && value.length > 0;

/** What is wrong with one claimed event, if anything. */
function eventProblem(event: unknown): string | undefined {
  if (!isObject(event)) return 'an event that is not an object';
  if (!isText(event.eventId)) return 'an event without an eventId';
  if (!isText(event.aggregateType) || !isText(event.aggregateId) || !isText(event.eventType)) {
    return `event ${String(event.eventId).slice(0, 64)} without its aggregate or type`;
  }
  if (!isPositiveInteger(event.aggregateSeq)) return `event ${event.eventId} without a valid aggregateSeq`;
  if (!isPositiveInteger(event.attempt)) return `event ${event.eventId} without a valid attempt count`;
  if (!(event.createdAt instanceof Date) || Number.isNaN(event.createdAt.getTime())) return `event ${event.eventId} without a valid createdAt`;
  return undefined;
}

/**
 * A source's claim answer, checked against what the relay asked for: at most `limit` well-formed
 * events, each once, at most one per aggregate (its oldest unpublished event). Anything else throws a
 * `corruptRecord` inside the relay's storage call (so a `corrupt_record` StorageError) and nothing is published.
 */
export function checkedClaim(answer: unknown, input: OutboxClaimInput): readonly ClaimedEvent[] {
  if (!Array.isArray(answer)) throw corruptRecord('the outbox claim answered something that is not a list of events');
  if (answer.length > input.limit) throw corruptRecord(`the outbox claim answered ${answer.length} events, more than the ${input.limit} asked for`);
  const ids = new Set<string>();
  const aggregates = new Set<string>();
  for (const event of answer) {
    const problem = eventProblem(event);
    if (problem) throw corruptRecord(`the outbox claim answered ${problem}`);
    const { eventId, aggregateType, aggregateId } = event as ClaimedEvent;
    if (ids.has(eventId)) throw corruptRecord(`the outbox claim answered event ${eventId} twice`);
    const aggregate = `${aggregateType}\u0000${aggregateId}`;
    if (aggregates.has(aggregate)) throw corruptRecord(`the outbox claim answered two events of aggregate ${aggregateType}/${aggregateId}, not only its oldest`);
    ids.add(eventId);
    aggregates.add(aggregate);
  }
  return answer as readonly ClaimedEvent[];
}
