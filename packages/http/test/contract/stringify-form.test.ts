import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isStringifyForm } from '../../src/contract/stringify-form.js';

/** What the JSON fast path must never get wrong: text it accepts is its own `JSON.stringify` round trip. */
const roundTrips = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text)) === text;
  } catch {
    return false;
  }
};

/** JSON text near the edges the scanner judges: numbers, escapes, surrogates, integer-like and repeated names, whitespace. */
const token = fc.oneof(
  { arbitrary: fc.constantFrom('0', '7', '-12', '123456789012345', '"a"', '"\ud83d\ude00"', '"\u2028"', '"\u007f"', 'true', 'false', 'null'), weight: 4 },
  { arbitrary: fc.constantFrom('-0', '1.0', '1.5', '1e3', '01', '1234567890123456', '"\\n"', '"\\u0041"', '"\ud800"'), weight: 1 },
);
const memberName = fc.constantFrom('"a"', '"b"', '"1"', '"01"', '"__proto__"', '"\\u0061"', '""');
const { value: structured } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, token, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(memberName, tie('value')), { maxLength: 4 })
    .map((members) => `{${members.map(([name, value]) => `${name}:${value}`).join(',')}}`),
}));
/** Structured text, sometimes with a space or a stray character put in somewhere. */
const edgyText = fc.tuple(structured, fc.nat(), fc.constantFrom('', '', ' ', '\n', ',', 'x')).map(([text, at, extra]) => {
  const cut = at % (text.length + 1);
  return text.slice(0, cut) + extra + text.slice(cut);
});

describe('isStringifyForm: the JSON fast path of stored bodies', () => {
  it('accepts only text that JSON.stringify writes back byte for byte (any JSON value, any edgy text)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.json().map((text) => JSON.stringify(JSON.parse(text), null, 1)), edgyText, fc.string()), (text) => {
        if (isStringifyForm(text)) expect(roundTrips(text)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it('accepts the compact JSON of plain payloads (what the fast path is for)', () => {
    for (const value of [{ id: 'pay_1', amount: 1000, currency: 'EUR' }, [1, -2, 0, 'x', true, false, null, { a: [] }], {}, 'text', 0, { __proto__x: 1 }]) {
      expect(isStringifyForm(JSON.stringify(value))).toBe(true);
    }
  });

  it('leaves to the parse-and-compare path what stringify writes otherwise', () => {
    for (const text of ['{"a":1,"a":2}', '{"b":1,"1":2}', '-0', '1.0', '1e3', '1.5', '01', '"\\u0041"', '"\\n"', '{ "a":1}', '[1,]', '"\ud800"', '12345678901234567890', '{"a":1}x']) {
      expect(isStringifyForm(text), text).toBe(false);
    }
  });
});
