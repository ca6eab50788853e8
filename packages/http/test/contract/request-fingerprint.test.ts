import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchParamsObject, targetParts } from '../../src/contract/request-fingerprint.js';
import { pathAndQuery } from '../../src/fetch/with-idempotency.js';

/** Characters a request target may hold, the awkward ones over-represented. */
const targetChar = fc.oneof(
  fc.constantFrom('/', '?', '&', '=', '%', '+', '.', '#', ' ', '"', "'", '<', '>', '\\', '~', '-', '_', '%2F', '%zz', '..', '//'),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
  fc.constantFrom('é', '☃', '😀'),
);
const target = fc.array(targetChar, { maxLength: 24 }).map((parts) => `/${parts.join('')}`);

describe('request targets in the fingerprint', () => {
  it('the fast path reads path and query exactly as the WHATWG URL parser does after an origin, so fingerprints do not change', () => {
    fc.assert(
      fc.property(target, (url) => {
        const parsed = new URL(`http://localhost${url}`);
        expect(targetParts(url)).toEqual({ path: parsed.pathname, query: searchParamsObject(parsed.searchParams) });
      }),
      { numRuns: 3_000 },
    );
  });

  it('pathAndQuery of a Request URL fingerprints as its pathname and search', () => {
    fc.assert(
      fc.property(target, fc.constantFrom('http://localhost', 'https://api.example.com:8443', 'http://[::1]:3000'), (url, origin) => {
        const request = new Request(`${origin}${url}`);
        const parsed = new URL(request.url);
        expect(targetParts(pathAndQuery(request.url))).toEqual(targetParts(parsed.pathname + parsed.search));
      }),
      { numRuns: 2_000 },
    );
  });
});
