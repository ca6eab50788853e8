import { assertValidKey } from '@oncely/core';
import type { Profile } from '../contract/problem.js';

/**
 * The `Idempotency-Key` field value for a key: the IETF draft's structured-field string
 * (`"…"`, RFC 8941, with `"` and `\` escaped) for the `ietf` profile, the bare key for `stripe`.
 */
export function formatIdempotencyKey(key: string, profile: Profile = 'ietf'): string {
  assertValidKey(key);
  return profile === 'stripe' ? key : `"${key.replace(/[\\"]/g, (character) => `\\${character}`)}"`;
}
