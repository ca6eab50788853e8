import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { freshClaimJson, isInProgress } from '../../src/store/record-reply.js';

const scope = { tenant: 't', principal: '', operation: 'payments.create.v1', key: 'k' };

describe('the fresh claim record the client writes', () => {
  it('is JSON that reads back the exact token and fingerprint, in the documented member order, for any strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.uuid(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })),
        fc.oneof(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }), fc.string({ unit: 'binary' })),
        (token, fingerprint) => {
          const json = freshClaimJson({ scope, token, fingerprint, leaseMs: 1_000, retentionMs: 5_000 }, 5_000);
          expect(isInProgress(json)).toBe(true);
          const parsed = JSON.parse(json);
          expect(Object.keys(parsed)).toEqual(['state', 'fence', 'token', 'fingerprint', 'leaseMs', 'ttlMs']);
          expect(parsed).toEqual({ state: 'in_progress', fence: 1, token, fingerprint, leaseMs: 1_000, ttlMs: 5_000 });
          // The text is what JSON.stringify writes, so the scripts' string comparisons see one spelling.
          expect(json).toBe(JSON.stringify(parsed));
        },
      ),
      { numRuns: 500 },
    );
  });
});
