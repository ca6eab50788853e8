import type { OutboxEvent } from '@oncely/core/outbox';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseStreamEntry, partitionOf, toStreamFields } from '../../src/index.js';

const identifier = fc.string({ minLength: 1, maxLength: 40 });
const eventArb: fc.Arbitrary<OutboxEvent> = fc.record({
  eventId: identifier,
  aggregateType: identifier,
  aggregateId: identifier,
  aggregateSeq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  eventType: identifier,
  payload: fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown),
  createdAt: fc.date({ min: new Date(0), max: new Date(Date.UTC(9999, 0)), noInvalidDate: true }),
  headers: fc.option(fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.stringMatching(/^[ -~]{0,60}$/), { minKeys: 1, maxKeys: 4 }), {
    nil: undefined,
  }),
}, { requiredKeys: ['eventId', 'aggregateType', 'aggregateId', 'aggregateSeq', 'eventType', 'payload', 'createdAt'] });

describe('stream entries', () => {
  it('an event survives the trip through stream fields unchanged', () => {
    fc.assert(
      fc.property(eventArb, (event) => {
        expect(parseStreamEntry(toStreamFields(event))).toEqual({ kind: 'event', event });
      }),
    );
  });

  it('says why an entry is not an oncely event', () => {
    const fields = toStreamFields({
      eventId: 'e1',
      aggregateType: 'a',
      aggregateId: 'b',
      aggregateSeq: 1,
      eventType: 't',
      payload: {},
      createdAt: new Date(0),
    });
    const replace = (name: string, value: string) => fields.map((v, i) => (fields[i - 1] === name ? value : v));
    expect(parseStreamEntry(null)).toMatchObject({ kind: 'malformed', problem: 'deleted' });
    expect(parseStreamEntry(['foo', 'bar'])).toMatchObject({ kind: 'malformed', problem: 'missing_field', fields: { foo: 'bar' } });
    expect(parseStreamEntry(replace('aggregateSeq', '0'))).toMatchObject({ problem: 'bad_sequence' });
    expect(parseStreamEntry(replace('aggregateSeq', '1.5'))).toMatchObject({ problem: 'bad_sequence' });
    expect(parseStreamEntry(replace('payload', '{nope'))).toMatchObject({ problem: 'bad_payload' });
    expect(parseStreamEntry(replace('createdAt', 'yesterday'))).toMatchObject({ problem: 'bad_date' });
    expect(parseStreamEntry(replace('eventId', ''))).toMatchObject({ problem: 'missing_field' });
    expect(parseStreamEntry([...fields, 'headers', '{"traceparent":1}'])).toMatchObject({ problem: 'bad_headers' });
    expect(parseStreamEntry([...fields, 'headers', 'nope'])).toMatchObject({ problem: 'bad_headers' });
  });

  it('partitionOf is stable and within range', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 64 }), (id, partitions) => {
        const partition = partitionOf(id, partitions);
        expect(partition).toBe(partitionOf(id, partitions));
        expect(Number.isInteger(partition) && partition >= 0 && partition < partitions).toBe(true);
      }),
    );
    expect(() => partitionOf('a', 0)).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('partitionOf spreads aggregates across partitions', () => {
    const counts = new Array(4).fill(0);
    for (let i = 0; i < 4_000; i++) counts[partitionOf(`account-${i}`, 4)] += 1;
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });
});
