import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize, DEFAULT_MAX_DEPTH, isOncelyError } from '../src/index.js';

const fromBits = (hex: string) => {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
};

const codeOf = (thunk: () => unknown) => {
  try {
    thunk();
  } catch (error) {
    return isOncelyError(error) ? error.code : 'not an OncelyError';
  }
  return 'did not throw';
};

describe('canonicalize reproduces RFC 8785', () => {
  it('serializes the §3.2.3 sample exactly', () => {
    // The RFC's input, parsed from its JSON text so number literals go through a JSON parser.
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        ' "literals": [null, true, false]}',
    );
    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('Appendix B: IEEE-754 %s serializes as %s', (bits, expected) => {
    expect(canonicalize(fromBits(bits))).toBe(expected);
  });

  it.each(['7fffffffffffffff', '7ff0000000000000', 'fff0000000000000'])(
    'Appendix B: %s (NaN or ±Infinity) is rejected with invalid_request_payload',
    (bits) => {
      expect(codeOf(() => canonicalize(fromBits(bits)))).toBe('invalid_request_payload');
    },
  );

  it('sorts keys by UTF-16 code units, not by code points or locale', () => {
    // U+1F600 is a surrogate pair starting 0xD83D, which sorts before U+FB33 (0xFB33) by code unit.
    const input = { '\uFB33': 1, '\u{1F600}': 2, a: 3, B: 4, '\u00e9': 5 };
    expect(canonicalize(input)).toBe('{"B":4,"a":3,"é":5,"😀":2,"דּ":1}');
  });
});

describe('canonicalize for JavaScript values', () => {
  it('omits object properties that are undefined, as JSON.stringify does', () => {
    expect(canonicalize({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  it('honours toJSON, so a Date becomes its ISO string', () => {
    expect(canonicalize({ at: new Date(Date.UTC(2026, 10, 29)) })).toBe('{"at":"2026-11-29T00:00:00.000Z"}');
  });

  it('unboxes boxed primitives', () => {
    expect(canonicalize([new Number(1), new String('x'), new Boolean(false)])).toBe('[1,"x",false]');
  });

  it('accepts shared references that are not cycles', () => {
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['a BigInt', 10n],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
    ['undefined at the top', undefined],
    ['undefined in an array', [1, undefined]],
    ['a function-valued property', { f: () => 1 }],
    ['a nested BigInt', { amount: { cents: 1000n } }],
    ['a cycle', cyclic],
    ['a Map', new Map([['a', 1]])],
    ['a Set', new Set([1])],
    ['a typed array', new Uint8Array([1])],
    ['a lone surrogate in a string', 'a\uD800b'],
    ['a lone surrogate in a key', { '\uDC00': 1 }],
  ])('rejects %s with invalid_request_payload', (_name, value) => {
    expect(codeOf(() => canonicalize(value))).toBe('invalid_request_payload');
  });

  it('rejects a hole in a sparse array as undefined, never emitting invalid JSON', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
    expect(() => canonicalize({ lines: [1, , 2] })).toThrow(/at \$\.lines\[1\]: undefined has no JSON form/);
  });

  it('serializes null-prototype objects and class instances by their own enumerable members', () => {
    const bare = Object.assign(Object.create(null), { b: 1, a: 2 });
    class Money {
      currency = 'EUR';
      amount = 1000;
    }
    expect(canonicalize({ bare, money: new Money() })).toBe('{"bare":{"a":2,"b":1},"money":{"amount":1000,"currency":"EUR"}}');
  });

  it('names the offending path in the error message', () => {
    expect(() => canonicalize({ order: { lines: [{ qty: Number.NaN }] } })).toThrow(/\$\.order\.lines\[0\]\.qty/);
  });
});

const json = fc.jsonValue({ maxDepth: 4 });
const jsonWithUnicode = fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' });

/** Rebuilds every object with its keys in reverse order. */
const reorder = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reorder);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).reverse()) {
      const child = reorder((value as Record<string, unknown>)[key]);
      Object.defineProperty(out, key, { value: child, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
};

describe('canonicalize properties', () => {
  it('is invariant under object key order', () => {
    fc.assert(fc.property(jsonWithUnicode, (value) => canonicalize(reorder(value)) === canonicalize(value)));
  });

  it('is invariant under JSON whitespace', () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 1, max: 8 }), (value, indent) => {
        const spaced = JSON.parse(JSON.stringify(value, null, indent));
        expect(canonicalize(spaced)).toBe(canonicalize(value));
      }),
    );
  });

  it('round-trips: JSON.parse(canonicalize(v)) deep-equals v for JSON values', () => {
    fc.assert(
      fc.property(jsonWithUnicode, (value) => {
        expect(JSON.parse(canonicalize(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('is idempotent: canonicalizing canonical JSON changes nothing', () => {
    fc.assert(
      fc.property(json, (value) => {
        const once = canonicalize(value);
        expect(canonicalize(JSON.parse(once))).toBe(once);
      }),
    );
  });

  it('contains no insignificant whitespace outside strings', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3, stringUnit: fc.constantFrom('a', 'b') }), (value) => {
        expect(/\s/.test(canonicalize(value))).toBe(false);
      }),
    );
  });
});

/**
 * The straightforward reading of RFC 8785 plus the documented JavaScript rules, written for clarity
 * rather than speed: `canonicalize` must agree with it on every output and every error message.
 */
function referenceCanonicalize(value: unknown, path = '$', ancestors: readonly object[] = []): string {
  const fail = (reason: string): never => {
    throw new Error(`oncely: the request payload is not JSON at ${path}: ${reason}`);
  };
  const quoted = (text: string) =>
    /[\uD800-\uDFFF]/u.test(text) ? fail('the string contains a lone UTF-16 surrogate') : JSON.stringify(text);
  if (value === null) return 'null';
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : fail(`${value} is not a finite number`);
  if (typeof value === 'bigint') return fail('a BigInt has no JSON form (send it as a string)');
  if (typeof value === 'undefined') return fail('undefined has no JSON form');
  if (typeof value !== 'object') return fail(`a ${typeof value} has no JSON form`);
  if (ancestors.includes(value)) return fail('the value contains a cycle');
  const withToJSON = value as { toJSON?: (key: string) => unknown };
  if (typeof withToJSON.toJSON === 'function') return referenceCanonicalize(withToJSON.toJSON(''), path, ancestors);
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return referenceCanonicalize(value.valueOf(), path, ancestors);
  }
  if (value instanceof Map) return fail('a Map has no faithful JSON form');
  if (value instanceof Set) return fail('a Set has no faithful JSON form');
  if (value instanceof WeakMap || value instanceof WeakSet) return fail('a weak collection has no faithful JSON form');
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return fail('a binary buffer has no faithful JSON form');
  if (value instanceof RegExp) return fail('a RegExp has no faithful JSON form');
  if (value instanceof Promise) return fail('a Promise has no faithful JSON form');
  const inside = [...ancestors, value];
  if (Array.isArray(value)) {
    return `[${Array.from(value, (item, index) => referenceCanonicalize(item, `${path}[${index}]`, inside)).join(',')}]`;
  }
  const members: string[] = [];
  for (const name of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[name];
    if (member === undefined) continue;
    const memberPath = `${path}.${name}`;
    members.push(`${referenceCanonicalize(name, memberPath)}:${referenceCanonicalize(member, memberPath, inside)}`);
  }
  return `{${members.join(',')}}`;
}

/** Either the output or the error message: what two implementations must agree on. */
const outcome = (serialize: (value: unknown) => string, value: unknown) => {
  try {
    return { json: serialize(value) };
  } catch (error) {
    return { error: (error as Error).message };
  }
};

describe('canonicalize agrees with a straightforward reference implementation', () => {
  /** Characters that exercise escaping, sorting and surrogate handling. */
  const character = fc.oneof(
    fc.constantFrom('a', 'B', 'é', '€', '"', '\\', '/', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\uFB33'),
    fc.constantFrom('\u{1F600}', '\uD800', '\uDC00', '\uDBFF\uDFFF'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  );
  const text = fc.string({ unit: character, maxLength: 6 });
  class Money {
    constructor(readonly amount: number) {}
  }
  const leaf = fc.oneof(
    { weight: 6, arbitrary: fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null)) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constant(undefined),
        fc.bigInt(),
        fc.constant(() => 1),
        fc.constant(Symbol('s')),
        fc.date({ noInvalidDate: true }),
        fc.double().map((n) => new Number(n)),
        text.map((t) => new String(t)),
        fc.boolean().map((b) => new Boolean(b)),
        fc.constant(new Map([['a', 1]])),
        fc.constant(new Set([1])),
        fc.constant(new Uint8Array([1])),
        fc.constant(/re/),
        fc.integer().map((n) => new Money(n)),
      ),
    },
  );
  const { tree } = fc.letrec((tie) => ({
    tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object'), tie('cyclic')),
    array: fc.array(tie('tree'), { maxLength: 5 }),
    // fast-check also builds null-prototype objects and own `__proto__` members here.
    object: fc.dictionary(text, tie('tree'), { maxKeys: 5 }),
    cyclic: fc.dictionary(text, tie('tree'), { maxKeys: 3 }).map((members) => {
      const loop: Record<string, unknown> = { ...members };
      loop.self = loop;
      return loop;
    }),
  }));

  it('gives the same JSON or the same error message for any value', () => {
    fc.assert(
      fc.property(tree, (value) => {
        expect(outcome(canonicalize, value)).toEqual(outcome(referenceCanonicalize, value));
      }),
      { numRuns: 2_000 },
    );
  });

  it('raises only coded OncelyErrors', () => {
    fc.assert(
      fc.property(tree, (value) => {
        try {
          canonicalize(value);
        } catch (error) {
          expect(isOncelyError(error, 'invalid_request_payload')).toBe(true);
        }
      }),
    );
  });
});

/** `depth` arrays or objects nested one in the next (`[]` is depth 1). */
const nested = (depth: number, kind: 'array' | 'object'): unknown => {
  let value: unknown = kind === 'array' ? [] : {};
  for (let level = 1; level < depth; level++) value = kind === 'array' ? [value] : { a: value };
  return value;
};

describe('canonicalize bounds nesting', () => {
  it('a body nested 10,000 deep is a coded invalid_request_payload, not a stack overflow', () => {
    for (const kind of ['array', 'object'] as const) {
      expect(codeOf(() => canonicalize(nested(10_000, kind)))).toBe('invalid_request_payload');
      expect(() => canonicalize(nested(10_000, kind))).toThrow(/deeper than 512 levels/);
    }
  });

  it('accepts exactly maxDepth levels and refuses one more, for the default and any configured limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.option(fc.integer({ min: 1, max: 1_000 }), { nil: undefined }), fc.constantFrom('array' as const, 'object' as const), (depth, maxDepth, kind) => {
        const limit = maxDepth ?? DEFAULT_MAX_DEPTH;
        const code = codeOf(() => canonicalize(nested(depth, kind), maxDepth === undefined ? {} : { maxDepth }));
        expect(code).toBe(depth <= limit ? 'did not throw' : 'invalid_request_payload');
      }),
      { numRuns: 300 },
    );
  });
});
