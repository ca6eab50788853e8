import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasControlCharacter } from '../../src/adapter.js';
import { createIdempotency, downstreamKey, downstreamKeyInput, isOncelyError, memoryStore, type Scope } from '../../src/index.js';

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const scopeArb: fc.Arbitrary<Scope> = fc.record({ tenant: text, principal: text, operation: text, key: text });
const step = fc.string({ minLength: 1, maxLength: 20 }).filter((name) => !hasControlCharacter(name));
const tuple = (scope: Scope, name: string) => [scope.tenant, scope.principal, scope.operation, scope.key, name];

describe('downstream keys: SHA-256 of a domain-separated, length-prefixed encoding', () => {
  it('is the documented derivation: hex SHA-256 of "oncely.downstream-key.v1" and |length:field for each field', async () => {
    const scope = { tenant: 't', principal: 'p', operation: 'payments.create.v1', key: 'k-1' };
    const input = 'oncely.downstream-key.v1|1:t|1:p|18:payments.create.v1|3:k-1|13:stripe.charge';
    expect(downstreamKeyInput(scope, 'stripe.charge')).toBe(input);
    expect(await downstreamKey(scope, 'stripe.charge')).toBe(createHash('sha256').update(input, 'utf8').digest('hex'));
  });

  it('is stable: the same scope, key and step give the same key every time', async () => {
    await fc.assert(fc.asyncProperty(scopeArb, step, async (scope, name) => {
      expect(await downstreamKey({ ...scope }, name)).toBe(await downstreamKey(scope, name));
    }), { numRuns: 200 });
  });

  it('is distinct per step, scope and key, and no two tuples share an encoding (("a","bc") is not ("ab","c"))', async () => {
    await fc.assert(fc.asyncProperty(scopeArb, step, scopeArb, step, async (a, stepA, b, stepB) => {
      fc.pre(JSON.stringify(tuple(a, stepA)) !== JSON.stringify(tuple(b, stepB)));
      expect(downstreamKeyInput(a, stepA)).not.toBe(downstreamKeyInput(b, stepB));
      expect(await downstreamKey(a, stepA)).not.toBe(await downstreamKey(b, stepB));
    }), { numRuns: 300 });
    // Shifting a boundary between neighbouring fields changes the encoding.
    const base = { tenant: 'a', principal: 'bc', operation: 'op', key: 'k' };
    expect(downstreamKeyInput(base, 's')).not.toBe(downstreamKeyInput({ ...base, tenant: 'ab', principal: 'c' }, 's'));
    expect(downstreamKeyInput({ ...base, key: 'k|1:s' }, 'x')).not.toBe(downstreamKeyInput(base, 's|1:x'));
  });

  it('holds no raw key material: the client key never appears in the derived key', async () => {
    await fc.assert(fc.asyncProperty(scopeArb, step, async (scope, name) => {
      const derived = await downstreamKey(scope, name);
      expect(derived).toMatch(/^[0-9a-f]{64}$/);
      if (scope.key.length >= 4) expect(derived.includes(scope.key)).toBe(false);
    }), { numRuns: 100 });
  });

  it('a bad step name is an invalid_option error', async () => {
    const scope = { tenant: 't', principal: '', operation: 'o', key: 'k' };
    for (const bad of ['', 'x'.repeat(129), 'a\nb', 42]) {
      await expect(Promise.resolve().then(() => downstreamKey(scope, bad as string))).rejects.toSatisfy((error) => isOncelyError(error, 'invalid_option'));
    }
  });

  it('handlers get context.downstreamKey in lease and transaction mode, stable across a retry after a lease takeover', async () => {
    let now = 0;
    const store = memoryStore({ clock: { now: () => now } });
    const engine = createIdempotency({ store, leaseMs: 1_000 });
    const request = { tenant: 't', operation: 'payments.create.v1', key: 'k-1', request: { amount: 5 } };
    const keys: string[] = [];
    // The first owner records its key and stalls past its lease; the retry takes over.
    const first = engine.run(request, async (context) => {
      keys.push(await context.downstreamKey('stripe.charge'));
      now += 5_000;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { status: 201 };
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await engine.run(request, async (context) => {
      keys.push(await context.downstreamKey('stripe.charge'), await context.downstreamKey('stripe.refund'));
      expect(context.fence).toBe(2);
      return { status: 201 };
    });
    expect(second.kind).toBe('executed');
    await first.catch(() => undefined);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(keys[0]).toBe(await downstreamKey({ tenant: 't', principal: '', operation: 'payments.create.v1', key: 'k-1' }, 'stripe.charge'));
  });
});
