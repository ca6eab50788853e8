import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/retry.js';

const now = Date.UTC(1994, 10, 6, 8, 49, 0);

describe('parseRetryAfter', () => {
  it('reads delay-seconds as milliseconds', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10_000_000 }), (seconds) => {
      expect(parseRetryAfter(String(seconds), now)).toBe(seconds * 1_000);
    }));
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
  });

  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
    ['obsolete RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ['obsolete asctime', 'Sun Nov  6 08:49:37 1994'],
  ])('reads an HTTP-date (%s) as the wait from now', (_, value) => {
    expect(parseRetryAfter(value, now)).toBe(37_000);
  });

  it('a date in the past means no wait', () => {
    expect(parseRetryAfter('Sat, 05 Nov 1994 08:49:37 GMT', now)).toBe(0);
  });

  it.each([null, undefined, '', '-1', '1.5', '10s', 'soon', '2024-01-01T00:00:00Z', 'Sun, 06 Nov 1994 08:49:37 PST'])(
    'ignores %j',
    (value) => {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    },
  );
});
