import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEventHeaders, hasControlCharacter, type OutboxEvent, parseBrokerMessage, prepareOutboxEvent, toBrokerMessage } from '../../src/adapter.js';

const identifier = fc.string({ minLength: 1, maxLength: 40 }).filter((text) => !hasControlCharacter(text));
const headerName = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,30}$/);
const headerValue = fc.stringMatching(/^[ -~]{0,80}$/);
const eventArb: fc.Arbitrary<OutboxEvent> = fc.record(
  {
    eventId: identifier,
    aggregateType: identifier,
    aggregateId: identifier,
    aggregateSeq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    eventType: identifier,
    payload: fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown),
    createdAt: fc.date({ min: new Date(0), max: new Date(Date.UTC(9999, 0)), noInvalidDate: true }),
    headers: fc.dictionary(headerName, headerValue, { minKeys: 1, maxKeys: 5 }),
  },
  { requiredKeys: ['eventId', 'aggregateType', 'aggregateId', 'aggregateSeq', 'eventType', 'payload', 'createdAt'] },
);

describe('broker messages', () => {
  it('property: an event survives toBrokerMessage → parseBrokerMessage unchanged, headers included', () => {
    fc.assert(
      fc.property(eventArb, (event) => {
        const { body, headers } = toBrokerMessage(event, Number.MAX_SAFE_INTEGER);
        expect(parseBrokerMessage(body, headers)).toEqual({ kind: 'event', event });
      }),
    );
  });

  it('refuses a body over the limit and headers a broker cannot carry with invalid_event', () => {
    const event: OutboxEvent = { eventId: 'e', aggregateType: 'a', aggregateId: 'b', aggregateSeq: 1, eventType: 't', payload: 'x'.repeat(100), createdAt: new Date(0) };
    expect(() => toBrokerMessage(event, 50)).toThrow(expect.objectContaining({ code: 'invalid_event' }));
    for (const headers of [{ a: 1 }, { 'bad name': 'x' }, { a: 'line\r\nbreak' }, { a: 'x'.repeat(5_000) }, ['x'], 'x']) {
      expect(() => toBrokerMessage({ ...event, headers } as unknown as OutboxEvent, 1_000)).toThrow(expect.objectContaining({ code: 'invalid_event' }));
    }
  });

  it('says why a message is not an oncely event', () => {
    const text = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    const good = { eventId: 'e', aggregateType: 'a', aggregateId: 'b', aggregateSeq: 1, eventType: 't', payload: null, createdAt: '2026-01-01T00:00:00Z' };
    expect(parseBrokerMessage(new Uint8Array([0xff, 0xfe]))).toEqual({ kind: 'malformed', problem: 'not_json' });
    expect(parseBrokerMessage(text({ ...good, eventId: '' }))).toEqual({ kind: 'malformed', problem: 'missing_field' });
    expect(parseBrokerMessage(text({ ...good, aggregateSeq: 0 }))).toEqual({ kind: 'malformed', problem: 'bad_sequence' });
    expect(parseBrokerMessage(text({ ...good, createdAt: 'soon' }))).toEqual({ kind: 'malformed', problem: 'bad_date' });
    expect(parseBrokerMessage(text(good), { a: 'x\n' })).toEqual({ kind: 'malformed', problem: 'bad_headers' });
  });

  it('prepareOutboxEvent merges the captured trace context under the caller headers, and checks them', () => {
    const base = { aggregateType: 'a', aggregateId: 'b', eventType: 't', payload: {} };
    expect(prepareOutboxEvent(base).headers).toBeUndefined();
    expect(prepareOutboxEvent({ ...base, headers: { tenant: 't1', traceparent: 'mine' } }, { traceparent: 'active', tracestate: 's' }).headers).toEqual({
      traceparent: 'mine',
      tracestate: 's',
      tenant: 't1',
    });
    expect(() => prepareOutboxEvent({ ...base, headers: { n: 1 } as never })).toThrow(expect.objectContaining({ code: 'invalid_event' }));
    expect(checkEventHeaders('invalid_event', {})).toBeUndefined();
  });
});
