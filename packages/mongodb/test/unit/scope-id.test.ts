import type { Scope } from '@oncely/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeScopeId, encodeScopeId } from '../../src/index.js';

const sameScope = (a: Scope, b: Scope) =>
  a.tenant === b.tenant && a.principal === b.principal && a.operation === b.operation && a.key === b.key;

/** Fields built from separators and quoting characters, so that near-collisions are common. */
const tricky = fc.string({ unit: fc.constantFrom('a', ':', '|', ',', '"', '\\', '[', ']', '/', ' ', '\u00e9', '\u{1F600}'), maxLength: 5 });
const trickyScope = fc.record({ tenant: tricky, principal: tricky, operation: tricky, key: tricky });
const anyScope = fc.record({
  tenant: fc.string({ unit: 'grapheme' }),
  principal: fc.string({ unit: 'grapheme' }),
  operation: fc.string(),
  key: fc.string({ unit: 'binary' }),
});

describe('scope _id encoding', () => {
  it('two scopes share an _id only when all four fields are equal (property)', () => {
    fc.assert(
      fc.property(trickyScope, trickyScope, (a, b) => {
        expect(encodeScopeId(a) === encodeScopeId(b)).toBe(sameScope(a, b));
      }),
      { numRuns: 2_000 },
    );
  });

  it('decoding an _id gives back exactly the scope that produced it, for any characters (property)', () => {
    fc.assert(
      fc.property(anyScope, (scope) => {
        expect(decodeScopeId(encodeScopeId(scope))).toEqual(scope);
      }),
      { numRuns: 1_000 },
    );
  });

  it('scopes that differ only in where a separator falls get different _ids', () => {
    const base = { operation: 'payments.create.v1', key: 'k' };
    const pairs: [Scope, Scope][] = [
      [{ ...base, tenant: 'a:b', principal: 'c' }, { ...base, tenant: 'a', principal: 'b:c' }],
      [{ ...base, tenant: 'a","b', principal: '' }, { ...base, tenant: 'a', principal: 'b' }],
      [{ tenant: 't', principal: '', operation: 'pay', key: 'v1:k' }, { tenant: 't', principal: '', operation: 'pay:v1', key: 'k' }],
    ];
    for (const [a, b] of pairs) expect(encodeScopeId(a)).not.toBe(encodeScopeId(b));
  });

  it('the _id is readable JSON naming tenant, principal, operation and key in that order', () => {
    expect(encodeScopeId({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1' })).toBe(
      '["acme","alice","payments.create.v1","k-1"]',
    );
  });

  it('an _id this adapter did not write is refused, not misread', () => {
    for (const id of ['plain', '["a","b","c"]', '["a","b","c",4]', 42, null, '{"tenant":"a"}']) {
      expect(() => decodeScopeId(id)).toThrow();
    }
  });
});
