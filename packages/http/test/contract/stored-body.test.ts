import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBody, encodeBody, isStoredBody } from '../../src/contract/stored-body.js';

const contentTypes = fc.constantFrom(
  undefined,
  'application/json',
  'application/problem+json; charset=utf-8',
  'text/plain; charset=utf-8',
  'text/html',
  'application/xml',
  'application/octet-stream',
  'image/png',
);

/** What a store does to a body: JSON out, JSON in. */
const throughStore = <T>(value: T): T => JSON.parse(JSON.stringify(value));

describe('stored bodies', () => {
  it('any bytes under any content type come back identical after a trip through JSON storage', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), contentTypes, (bytes, type) => {
        const stored = encodeBody(bytes, type);
        if (bytes.length === 0) {
          expect(stored).toBeUndefined();
        } else {
          const restored = throughStore(stored)!;
          expect(isStoredBody(restored)).toBe(true);
          expect(Buffer.from(decodeBody(restored)).equals(Buffer.from(bytes))).toBe(true);
        }
      }),
    );
  });

  it('a string body is stored as its UTF-8 bytes are, and replays as those bytes (lone surrogates as U+FFFD)', () => {
    const strings = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.jsonValue().map((value) => JSON.stringify(value)));
    fc.assert(
      fc.property(strings, contentTypes, (text, type) => {
        const bytes = new TextEncoder().encode(text);
        const stored = encodeBody(text, type);
        expect(stored).toEqual(encodeBody(bytes, type));
        if (stored !== undefined) expect(Buffer.from(decodeBody(throughStore(stored))).equals(Buffer.from(bytes))).toBe(true);
      }),
    );
    expect(encodeBody('a\ud800b', 'text/plain')).toEqual({ encoding: 'text', text: 'a\ufffdb' });
  });

  it('JSON text from JSON.stringify is stored as a JSON value; any other JSON text as text, byte for byte', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const compact = JSON.stringify(value);
        const stored = encodeBody(new TextEncoder().encode(compact), 'application/json');
        expect(stored).toEqual({ encoding: 'json', json: JSON.parse(compact) });
        const pretty = JSON.stringify(value, null, 2);
        const loose = encodeBody(new TextEncoder().encode(pretty), 'application/json');
        expect(loose?.encoding).toBe(pretty === compact ? 'json' : 'text');
        expect(new TextDecoder().decode(decodeBody(throughStore(loose)!))).toBe(pretty);
      }),
    );
    expect(encodeBody(new TextEncoder().encode('{"n":12345678901234567890}'), 'application/json')?.encoding).toBe('text');
  });

  it('text is stored as text when it is UTF-8 (a BOM kept), binary and non-UTF-8 text as base64', () => {
    expect(encodeBody(new TextEncoder().encode('\ufeffhé'), 'text/plain')).toEqual({ encoding: 'text', text: '\ufeffhé' });
    expect(encodeBody(Uint8Array.of(0x63, 0xe9), 'text/plain; charset=latin1')).toEqual({ encoding: 'base64', base64: 'Y+k=' });
    expect(encodeBody(new TextEncoder().encode('plain'), 'application/octet-stream')).toEqual({ encoding: 'base64', base64: 'cGxhaW4=' });
  });

  it('only exact stored-body shapes are recognised (a rebuilt plain JSON body is not mistaken for one)', () => {
    expect(isStoredBody({ encoding: 'text', text: 'a' })).toBe(true);
    expect(isStoredBody({ encoding: 'text', text: 'a', extra: 1 })).toBe(false);
    expect(isStoredBody({ encoding: 'json' })).toBe(false);
    expect(isStoredBody({ encoding: 'base64', base64: 1 })).toBe(false);
    expect(isStoredBody(['encoding', 'text'])).toBe(false);
  });
});
