import { corruptRecord } from '../errors.js';
import { isObject, isPositiveInteger } from '../storage/answer-shapes.js';
import type { ClaimedEvent } from './outbox-event.js';
import type { OutboxClaimInput } from './outbox-source.js';

/** One key per aggregate, for the sets and maps of relays and publishers (JSON, so no two (type, id) pairs share one). */
export const aggregateOf = (event: Pick<ClaimedEvent, 'aggregateType' | 'aggregateId'>): string => JSON.stringify([event.aggregateType, event.aggregateId]);

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
 * A source's claim answer, checked for shape: a list of well-formed events. Anything else throws a
 * `corruptRecord` inside the relay's storage call (so a `corrupt_record` StorageError) and nothing is
 * published; {@link claimMisfit} then checks the batch against what the relay asked for.
 */
export function checkedClaim(answer: unknown): readonly ClaimedEvent[] {
  if (!Array.isArray(answer)) throw corruptRecord('the outbox claim answered something that is not a list of events');
  for (const event of answer) {
    const problem = eventProblem(event);
    if (problem) throw corruptRecord(`the outbox claim answered ${problem}`);
  }
  return answer as readonly ClaimedEvent[];
}

/**
 * What is wrong with a well-formed claimed batch, if anything: more than `limit` events, an event
 * twice, or an aggregate's events out of increasing `aggregateSeq` order (publishing them would break
 * its order). A source may hand over several consecutive events of one aggregate.
 */
export function claimMisfit(claimed: readonly ClaimedEvent[], input: OutboxClaimInput): string | undefined {
  if (claimed.length > input.limit) return `${claimed.length} events, more than the ${input.limit} asked for`;
  const ids = new Set<string>();
  const last = new Map<string, number>();
  for (const event of claimed) {
    if (ids.has(event.eventId)) return `event ${event.eventId} twice`;
    ids.add(event.eventId);
    const aggregate = aggregateOf(event);
    const previous = last.get(aggregate);
    if (previous !== undefined && !(event.aggregateSeq > previous)) {
      return `sequence ${event.aggregateSeq} of ${event.aggregateType}/${event.aggregateId} after ${previous}`;
    }
    last.set(aggregate, event.aggregateSeq);
  }
  return undefined;
}
