import type { Scope } from '@oncely/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordKey } from '../../src/store/record-key.js';

/** Characters that break naive encodings: separators, braces, the escape itself, lone surrogates. */
const tricky = ['a', ':', '%', '{', '}', '3A', '%3A', '|', '\\', '"', ' ', '\u00e9', '\u{1F600}', '\uD800', '\uDBFF', '\uDC00', '\uFFFD', '\n'];
const field = fc.string({ unit: fc.constantFrom(...tricky), maxLength: 4 });
const scope = fc.record({ tenant: field, principal: field, operation: field, key: field });
const bytes = (prefix: string, s: Scope) => Buffer.from(recordKey(prefix, s), 'utf8');
const FIELDS = ['tenant', 'principal', 'operation', 'key'] as const;
/** Pairs a naive encoding would confuse: a separator and its escape, lone surrogates and U+FFFD. */
const confusable: readonly [string, string][] = [
  [':', '%3A'],
  ['%', '%25'],
  ['{', '%7B'],
  ['}', '%7D'],
  ['\uD800', '\uFFFD'],
  ['\uD800', '\uDBFF'],
  ['\uDC00', '%uDC00'],
];
/** A near miss of `s`: one character moved across a field boundary, or swapped for a confusable one. */
const nearMiss = (s: Scope) =>
  fc.oneof(
    fc.tuple(fc.nat(2), fc.boolean()).map(([i, forward]) => {
      const [from, to] = forward ? [FIELDS[i]!, FIELDS[i + 1]!] : [FIELDS[i + 1]!, FIELDS[i]!];
      const moved = forward ? s[from].slice(-1) : s[from].slice(0, 1);
      const rest = forward ? s[from].slice(0, -1) : s[from].slice(1);
      return { ...s, [from]: rest, [to]: forward ? moved + s[to] : s[to] + moved };
    }),
    fc.tuple(fc.constantFrom(...FIELDS), fc.constantFrom(...confusable), fc.boolean()).map(([name, [x, y], flip]) => {
      const [find, replace] = flip ? [y, x] : [x, y];
      return { ...s, [name]: s[name].replace(find, replace) };
    }),
  );
const pair = scope.chain((a) => fc.tuple(fc.constant(a), fc.oneof(scope, nearMiss(a))));
const same = (a: Scope, b: Scope) => a.tenant === b.tenant && a.principal === b.principal && a.operation === b.operation && a.key === b.key;

describe('record key encoding', () => {
  it('two scopes share a Redis key (as UTF-8 bytes) only when all four fields are equal (property)', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(bytes('p:', a).equals(bytes('p:', b))).toBe(same(a, b));
      }),
      { numRuns: 5_000 },
    );
  });

  it('a field that spells out an escape never meets the character it escapes (property)', () => {
    fc.assert(
      fc.property(scope, fc.constantFrom<keyof Scope>('tenant', 'principal', 'operation', 'key'), (s, name) => {
        const escaped = { ...s, [name]: `${s[name]}%3A` };
        const raw = { ...s, [name]: `${s[name]}:` };
        expect(recordKey('p:', escaped)).not.toBe(recordKey('p:', raw));
      }),
    );
  });

  it('the whole escaped scope is the hash tag, whatever the fields hold (property)', () => {
    fc.assert(
      fc.property(scope, (s) => {
        const key = recordKey('oncely:idem:', s);
        const open = key.indexOf('{');
        expect(open).toBe('oncely:idem:'.length);
        expect(key.indexOf('}', open)).toBe(key.length - 1);
        expect(key.slice(open + 1, -1).split(':').length).toBe(4);
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads as the scope for an operator running redis-cli', () => {
    const key = recordKey('oncely:idem:', { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k_7f91' });
    expect(key).toBe('oncely:idem:{acme:alice:payments.create.v1:k_7f91}');
    expect(recordKey('x:', { tenant: 'a:b', principal: '', operation: 'op.v1', key: '{k}%' })).toBe('x:{a%3Ab::op.v1:%7Bk%7D%25}');
    expect(recordKey('x:', { tenant: '\uD800', principal: '', operation: 'op', key: 'k' })).toBe('x:{%uD800::op:k}');
  });
});
