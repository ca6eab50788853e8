import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize, fingerprint, fingerprintInput, isOncelyError } from '../src/index.js';
import { excludePaths, selectPaths } from '../src/fingerprint/field-paths.js';
import type { NodeCryptoLike } from '../src/fingerprint/sha256.js';

const payment = { amount: '10.00', currency: 'USD', customer: { id: 'cus_19', email: 'a@example.com' }, trace_id: 't-1' };

describe('fingerprint', () => {
  it('is the lowercase hex SHA-256 of the canonical {operation, request}', async () => {
    const print = await fingerprint('payments.create.v1', { b: 1, a: 2 });
    expect(print).toMatch(/^[0-9a-f]{64}$/);
    // SHA-256 of {"operation":"payments.create.v1","request":{"a":2,"b":1}}, computed independently with node:crypto.
    const { createHash } = await import('node:crypto');
    const expected = createHash('sha256').update('{"operation":"payments.create.v1","request":{"a":2,"b":1}}').digest('hex');
    expect(print).toBe(expected);
  });

  it('binds the operation: the same request under another operation differs', async () => {
    expect(await fingerprint('payments.create.v1', payment)).not.toBe(await fingerprint('payments.create.v2', payment));
  });

  it('ignores transport fields left out with exclude', async () => {
    const a = await fingerprint('payments.create.v1', payment, { exclude: ['trace_id'] });
    const b = await fingerprint('payments.create.v1', { ...payment, trace_id: 't-2' }, { exclude: ['trace_id'] });
    expect(a).toBe(b);
  });

  it('select keeps only the fields that affect the operation, nested paths included', () => {
    const input = fingerprintInput('payments.create.v1', payment, { select: ['amount', 'customer.id'] });
    expect(input).toBe('{"operation":"payments.create.v1","request":{"amount":"10.00","customer":{"id":"cus_19"}}}');
  });

  it('paths that cross an array apply to every element', () => {
    const order = { lines: [{ sku: 'a', note: 'x' }, { sku: 'b', note: 'y' }] };
    expect(selectPaths(order, ['lines.sku'])).toEqual({ lines: [{ sku: 'a' }, { sku: 'b' }] });
    expect(excludePaths(order, ['lines.note'])).toEqual({ lines: [{ sku: 'a' }, { sku: 'b' }] });
  });

  it('segment arrays name fields that contain a dot', () => {
    expect(selectPaths({ 'a.b': 1, a: { b: 2 } }, [['a.b']])).toEqual({ 'a.b': 1 });
  });

  it('a field equal to its declared default counts as omitted', async () => {
    const options = { defaults: { currency: 'USD', capture: true } };
    const omitted = await fingerprint('payments.create.v1', { amount: '10.00' }, options);
    const explicit = await fingerprint('payments.create.v1', { amount: '10.00', currency: 'USD', capture: true }, options);
    const different = await fingerprint('payments.create.v1', { amount: '10.00', currency: 'EUR' }, options);
    expect(explicit).toBe(omitted);
    expect(different).not.toBe(omitted);
  });

  it('treats undefined properties as omitted and 1.0 as 1', async () => {
    expect(await fingerprint('op.v1', { a: 1, b: undefined })).toBe(await fingerprint('op.v1', { a: 1.0 }));
  });

  it('rejects a non-JSON payload with invalid_request_payload', async () => {
    const failure = await fingerprint('op.v1', { amount: 10n }).catch((error: unknown) => error);
    expect(isOncelyError(failure, 'invalid_request_payload')).toBe(true);
  });

  it('a request nested 10,000 deep is refused with invalid_request_payload, with or without select, exclude and defaults', async () => {
    let deep: unknown = [];
    for (let level = 1; level < 10_000; level++) deep = [deep];
    const options = [{}, { select: ['items.sku'] }, { exclude: ['items.trace'] }, { defaults: { 'items.qty': 1 } }];
    for (const option of options) {
      const failure = await fingerprint('op.v1', { items: deep }, option).catch((error: unknown) => error);
      expect(isOncelyError(failure, 'invalid_request_payload')).toBe(true);
    }
  });

  it('maxDepth counts the request itself: depth maxDepth passes, one more is refused', async () => {
    const request = { a: { b: [1] } };
    expect(await fingerprint('op.v1', request, { maxDepth: 3 })).toMatch(/^[0-9a-f]{64}$/);
    const failure = await fingerprint('op.v1', request, { maxDepth: 2 }).catch((error: unknown) => error);
    expect(isOncelyError(failure, 'invalid_request_payload')).toBe(true);
    const invalid = await fingerprint('op.v1', request, { maxDepth: 0 }).catch((error: unknown) => error);
    expect(isOncelyError(invalid, 'invalid_option')).toBe(true);
  });
});

describe('fingerprint properties', () => {
  const json = fc.jsonValue({ maxDepth: 3 });

  it('distinct canonical values give distinct fingerprints, equal ones equal fingerprints', async () => {
    await fc.assert(
      fc.asyncProperty(json, json, async (a, b) => {
        const same = canonicalize(a) === canonicalize(b);
        expect((await fingerprint('op.v1', a)) === (await fingerprint('op.v1', b))).toBe(same);
      }),
    );
  });

  it('is invariant under key order and whitespace of the request', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), json, { maxKeys: 6 }), async (request) => {
        const reversed = Object.fromEntries(Object.entries(request).reverse());
        const spaced = JSON.parse(JSON.stringify(request, null, 2));
        const print = await fingerprint('op.v1', request);
        expect(await fingerprint('op.v1', reversed)).toBe(print);
        expect(await fingerprint('op.v1', spaced)).toBe(print);
      }),
    );
  });

  const fields = fc.constantFrom('a', 'b', 'c', 'd', 'e');
  const record = fc.dictionary(fields, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 5 });

  it('select keeps exactly the named top-level fields that are present', () => {
    fc.assert(
      fc.property(record, fc.uniqueArray(fields), (value, named) => {
        const picked = selectPaths(value, named) as Record<string, unknown>;
        expect(Object.keys(picked).sort()).toEqual(Object.keys(value).filter((k) => (named as string[]).includes(k)).sort());
        for (const key of Object.keys(picked)) expect(picked[key]).toEqual(value[key]);
      }),
    );
  });

  it('exclude drops exactly the named fields and keeps the rest untouched', () => {
    fc.assert(
      fc.property(record, fc.uniqueArray(fields), (value, named) => {
        const kept = excludePaths(value, named) as Record<string, unknown>;
        expect(Object.keys(kept).sort()).toEqual(Object.keys(value).filter((k) => !(named as string[]).includes(k)).sort());
        for (const key of Object.keys(kept)) expect(kept[key]).toEqual(value[key]);
      }),
    );
  });

  it('nested select and exclude partition an object: together they hold every leaf exactly once', () => {
    const nested = fc.record({ outer: record, other: record }, { requiredKeys: ['outer'] });
    fc.assert(
      fc.property(nested, fc.uniqueArray(fields), (value, named) => {
        const paths = named.map((name) => `outer.${name}`);
        const picked = selectPaths(value, paths) as { outer?: Record<string, unknown> };
        const rest = excludePaths(value, paths) as { outer: Record<string, unknown> };
        expect({ ...rest.outer, ...picked.outer }).toEqual(value.outer);
        for (const key of Object.keys(picked.outer ?? {})) expect(Object.hasOwn(rest.outer, key)).toBe(false);
      }),
    );
  });
});

describe('sha256Hex', () => {
  /** Any UTF-16 text, lone surrogates included (every path hashes them as U+FFFD). */
  const anyText = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 200 }),
    fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)), maxLength: 50 }),
  );

  it("gives the same digest through Node's one-shot hash, createHash and Web Crypto, for any text", async () => {
    const crypto = await import('node:crypto');
    const { nodeSha256Hex, sha256Hex, sha256HexWebCrypto } = await import('../src/fingerprint/sha256.js');
    const oneShot = nodeSha256Hex({ hash: crypto.hash as NodeCryptoLike['hash'] });
    const incremental = nodeSha256Hex({ createHash: crypto.createHash });
    expect(oneShot).toBeTypeOf('function');
    expect(incremental).toBeTypeOf('function');
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        const web = await sha256HexWebCrypto(text);
        expect(oneShot!(text)).toBe(web);
        expect(incremental!(text)).toBe(web);
        expect(await sha256Hex(text)).toBe(web);
      }),
    );
  });

  it('matches the FIPS 180-2 test vector on every path', async () => {
    const crypto = await import('node:crypto');
    const { nodeSha256Hex, sha256Hex, sha256HexWebCrypto } = await import('../src/fingerprint/sha256.js');
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(nodeSha256Hex({ hash: crypto.hash as NodeCryptoLike['hash'] })!('abc')).toBe(abc);
    expect(nodeSha256Hex({ createHash: crypto.createHash })!('abc')).toBe(abc);
    expect(await sha256HexWebCrypto('abc')).toBe(abc);
    expect(await sha256Hex('abc')).toBe(abc);
  });

  it("prefers Node's one-shot hash, falls back to createHash, and offers nothing without either", async () => {
    const { nodeSha256Hex } = await import('../src/fingerprint/sha256.js');
    const createHash = () => ({ update: () => ({ digest: () => 'from createHash' }) });
    expect(nodeSha256Hex({ hash: () => 'from hash', createHash })!('x')).toBe('from hash');
    expect(nodeSha256Hex({ createHash })!('x')).toBe('from createHash');
    expect(nodeSha256Hex({})).toBeUndefined();
    expect(nodeSha256Hex(undefined)).toBeUndefined();
  });

  it('is synchronous on Node: the engine gets plain strings equal to the public async results', async () => {
    const { keyHash, keyHashNow, sha256Hex, sha256HexNow } = await import('../src/fingerprint/sha256.js');
    const { fingerprintNow } = await import('../src/fingerprint/fingerprint.js');
    expect(sha256HexNow('abc')).toBeTypeOf('string');
    expect(sha256HexNow('abc')).toBe(await sha256Hex('abc'));
    expect(keyHashNow('k_7f91')).toBe(await keyHash('k_7f91'));
    expect(keyHashNow('k_7f91')).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprintNow('op.v1', { b: 1, a: 2 })).toBe(await fingerprint('op.v1', { a: 2, b: 1 }));
  });
});
