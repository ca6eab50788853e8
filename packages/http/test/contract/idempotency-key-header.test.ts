import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey } from '../../src/index.js';

/** Serializes a key as an RFC 8941 sf-string, the way a draft-following client sends it. */
const sfString = (key: string) => `"${key.replace(/[\\"]/g, (char) => `\\${char}`)}"`;

const visibleAscii = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 255 });

describe('parseIdempotencyKey', () => {
  it('reads the draft example and a bare UUID token as the same key', () => {
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toEqual({ kind: 'valid', key: '8e03978e-40d5-43e8-bc93-6894a57f9324' });
    expect(parseIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toEqual({ kind: 'valid', key: '8e03978e-40d5-43e8-bc93-6894a57f9324' });
    expect(parseIdempotencyKey(undefined)).toEqual({ kind: 'absent' });
  });

  it('every valid key survives sf-string serialization, and as a bare token unless it starts with a quote or holds a comma', () => {
    fc.assert(
      fc.property(visibleAscii, (key) => {
        expect(parseIdempotencyKey(sfString(key))).toEqual({ kind: 'valid', key });
        expect(parseIdempotencyKey(` ${sfString(key)}\t`)).toEqual({ kind: 'valid', key });
        if (!key.startsWith('"') && !key.includes(',')) expect(parseIdempotencyKey(key)).toEqual({ kind: 'valid', key });
      }),
    );
  });

  it('two keys joined by a comma, as a proxy joins two fields, are refused in every form', () => {
    const token = visibleAscii.filter((key) => !key.startsWith('"') && !key.includes(','));
    const ows = fc.constantFrom('', ' ', '\t', ' \t ');
    fc.assert(
      fc.property(token, token, ows, ows, fc.boolean(), (first, second, before, after, quoted) => {
        const field = (key: string) => (quoted ? sfString(key) : key);
        expect(parseIdempotencyKey(`${field(first)}${before},${after}${field(second)}`)).toEqual({
          kind: 'invalid',
          detail: 'The request carries more than one Idempotency-Key field.',
        });
      }),
    );
  });

  it('anything holding a character outside visible ASCII is invalid, quoted or not', () => {
    const outside = fc.oneof(fc.integer({ min: 0, max: 0x20 }), fc.integer({ min: 0x7f, max: 0xffff })).map((code) => String.fromCharCode(code));
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), outside, fc.string({ maxLength: 20 }), (before, bad, after) => {
        const key = `a${before}${bad}${after}b`;
        expect(parseIdempotencyKey(key).kind).toBe('invalid');
        expect(parseIdempotencyKey(`"${key}"`).kind).toBe('invalid');
      }),
    );
  });

  it('explains each refusal', () => {
    expect(parseIdempotencyKey('k'.repeat(256))).toMatchObject({ kind: 'invalid', detail: expect.stringContaining('255') });
    expect(parseIdempotencyKey('"k"; a=1')).toMatchObject({ kind: 'invalid', detail: expect.stringContaining('closing quote') });
    expect(parseIdempotencyKey('"\\k"')).toMatchObject({ kind: 'invalid', detail: expect.stringContaining('escaped') });
    expect(parseIdempotencyKey('"open')).toMatchObject({ kind: 'invalid', detail: expect.stringContaining('missing') });
    expect(parseIdempotencyKey('')).toMatchObject({ kind: 'invalid', detail: expect.stringContaining('empty') });
    expect(parseIdempotencyKey(['a', 'b'])).toMatchObject({ kind: 'invalid', detail: expect.stringContaining('more than one') });
  });
});
