import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertInboxInput, prepareOutboxEvent } from '../../src/adapter.js';

const valid = { aggregateType: 'order', aggregateId: 'ord_1', eventType: 'order.created.v1', payload: { total: '10.00' } };
const invalidEvent = expect.objectContaining({ code: 'invalid_event' });

describe('prepareOutboxEvent', () => {
  it('fills in a random UUID as eventId and leaves the sequence to the outbox', () => {
    const first = prepareOutboxEvent(valid);
    const second = prepareOutboxEvent(valid);
    expect(first.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first.eventId).not.toBe(second.eventId);
    expect(first.aggregateSeq).toBeUndefined();
    expect(JSON.parse(first.payloadJson)).toEqual(valid.payload);
  });

  it('keeps the caller’s eventId and sequence', () => {
    expect(prepareOutboxEvent({ ...valid, eventId: 'evt_1', aggregateSeq: 7 })).toMatchObject({ eventId: 'evt_1', aggregateSeq: 7 });
  });

  it('refuses payloads without a faithful JSON form', () => {
    for (const payload of [Number.NaN, Number.POSITIVE_INFINITY, 10n, undefined, { when: () => 1 }]) {
      expect(() => prepareOutboxEvent({ ...valid, payload })).toThrow(invalidEvent);
    }
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => prepareOutboxEvent({ ...valid, payload: cycle })).toThrow(invalidEvent);
  });

  it('refuses sequences that are not positive safe integers', () => {
    for (const aggregateSeq of [0, -1, 1.5, 2 ** 53, Number.NaN]) {
      expect(() => prepareOutboxEvent({ ...valid, aggregateSeq })).toThrow(invalidEvent);
    }
  });

  it('refuses empty, overlong or control-character identifiers', () => {
    for (const field of ['eventId', 'aggregateType', 'aggregateId', 'eventType'] as const) {
      for (const bad of ['', 'x'.repeat(256), 'a\nb', 'a\u0000b', 42]) {
        expect(() => prepareOutboxEvent({ ...valid, [field]: bad } as typeof valid)).toThrow(invalidEvent);
      }
    }
  });

  it('accepts any identifier of 1–255 characters without control characters', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 255, unit: 'grapheme' }), (id) => {
        fc.pre(id.length <= 255 && [...id].every((c) => c.codePointAt(0)! > 0x1f && c !== '\u007f'));
        expect(prepareOutboxEvent({ ...valid, aggregateId: id }).aggregateId).toBe(id);
      }),
    );
  });
});

describe('assertInboxInput', () => {
  it('accepts a consumer and an event id', () => {
    expect(() => assertInboxInput({ consumer: 'billing', eventId: 'evt_1' })).not.toThrow();
  });

  it('refuses a missing consumer or event id', () => {
    for (const input of [{ consumer: '', eventId: 'e' }, { consumer: 'c', eventId: '' }, { consumer: 'c' }, undefined]) {
      expect(() => assertInboxInput(input as never)).toThrow(invalidEvent);
    }
  });
});
