import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withJsonText } from '../src/adapter.js';
import { createIdempotency, manualClock, memoryStore } from '../src/index.js';

describe('memory store cleanup', () => {
  it('purgeExpired frees the memory of expired records only', async () => {
    const local = manualClock(0);
    const store = memoryStore({ clock: local });
    const scope = (key: string) => ({ tenant: 't', principal: '', operation: 'op.v1', key });
    for (const key of ['a', 'b', 'c']) {
      await store.claim({ scope: scope(key), fingerprint: 'f', token: key, leaseMs: 10, retentionMs: 10 });
    }
    await store.claim({ scope: scope('live'), fingerprint: 'f', token: 'live', leaseMs: 10, retentionMs: 1_000 });
    await local.advance(20);
    expect(store.size).toBe(4);
    expect(await store.purgeExpired(2)).toBe(2);
    expect(await store.purgeExpired(10)).toBe(1);
    expect(store.size).toBe(1);
    expect((await store.get(scope('live')))?.state).toBe('in_progress');
  });
});

describe('memory store records by caller, operation and key', () => {
  // Few scopes, so steps meet the same one again; fields chosen so that a concatenation without lengths would collide.
  const scopeArb = fc.record({
    tenant: fc.constantFrom('1', '1:'),
    principal: fc.constantFrom('', 'a'),
    operation: fc.constantFrom('op', 'aop'),
    key: fc.constantFrom('k', 'k2'),
  });
  const step = fc.record({ scope: scopeArb, action: fc.constantFrom('claim', 'complete', 'release', 'wait', 'purge'), expire: fc.boolean() });

  it('counts, finds and removes exactly the records of each scope, as a map keyed by the whole scope would', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const local = manualClock(0);
        const store = memoryStore({ clock: local });
        const model = new Map<string, { token: string; expiresAt: number; state: string }>();
        const id = (s: object) => JSON.stringify(s);
        let n = 0;
        for (const { scope, action, expire } of steps) {
          const now = local.now();
          const known = model.get(id(scope));
          const live = known && known.expiresAt > now ? known : undefined;
          if (action === 'claim') {
            const token = `t${n++}`;
            const answer = await store.claim({ scope, fingerprint: 'f', token, leaseMs: 1_000, retentionMs: expire ? 5 : 1_000 });
            expect(answer.kind).toBe(live ? 'existing' : 'claimed');
            if (!live) model.set(id(scope), { token, expiresAt: now + (expire ? 5 : 1_000), state: 'in_progress' });
          } else if (action === 'complete' && live?.state === 'in_progress') {
            expect(await store.complete({ scope, token: live.token, state: 'succeeded', response: { status: 201 }, retentionMs: 1_000 })).toBe('ok');
            model.set(id(scope), { ...live, expiresAt: now + 1_000, state: 'succeeded' });
          } else if (action === 'release' && live?.state === 'in_progress') {
            expect(await store.release({ scope, token: live.token })).toBe('ok');
            model.delete(id(scope));
          } else if (action === 'wait') {
            // Expired records stay held (and counted) until purged; a claim over one replaces it.
            await local.advance(10);
          } else if (action === 'purge') {
            await local.advance(10);
            const expired = [...model].filter(([, entry]) => entry.expiresAt <= local.now()).length;
            expect(await store.purgeExpired(1_000)).toBe(expired);
            for (const [key, entry] of model) if (entry.expiresAt <= local.now()) model.delete(key);
          }
          expect(store.size).toBe(model.size);
          const record = await store.get(scope);
          const expected = model.get(id(scope));
          expect(record?.state).toBe(expected && expected.expiresAt > local.now() ? expected.state : undefined);
          if (record) expect(record.scope).toEqual(scope);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('memory store keeps the response as JSON text', () => {
  const request = (key: string) => ({ tenant: 't', operation: 'op.v1', key, request: { n: 1 } });

  it('replays what the handler answered even when it changes its body afterwards, as a store holding a snapshot does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.option(fc.string(), { nil: undefined }), async (value, resourceId) => {
        // The same engine on a spread copy of a memory store: a store the engine must hand a snapshot.
        const inner = memoryStore();
        let handed: { body?: unknown } | undefined;
        const copy = {
          ...inner,
          complete: (input: Parameters<typeof inner.complete>[0]) => {
            handed = input.response;
            return inner.complete(input);
          },
        };
        const direct = createIdempotency({ store: memoryStore() });
        const wrapped = createIdempotency({ store: copy });
        const body = { value, list: [value] };
        const answer = async () => ({ status: 201, headers: { 'x-a': '1' }, body, ...(resourceId === undefined ? {} : { resourceId }) });
        await direct.run(request('k'), answer);
        await wrapped.run(request('k'), answer);
        expect(handed?.body).not.toBe(body);
        body.list.push('changed later');
        const expected = JSON.parse(JSON.stringify({ value, list: [value] }));
        for (const engine of [direct, wrapped]) {
          const replay = await engine.run(request('k'), answer);
          expect(replay.kind).toBe('replayed');
          if (replay.kind !== 'replayed') return;
          expect(replay.response.body).toEqual(expected);
          expect(replay.response.headers).toEqual({ 'x-a': '1' });
          expect(replay.response.resourceId).toBe(resourceId);
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('a response body marked with its JSON text (withJsonText)', () => {
  const request = (key: string) => ({ tenant: 't', operation: 'op.v1', key, request: { n: 1 } });

  it('is stored as that text, never serialized again, on a memory store and on a copy the engine hands a snapshot', async () => {
    const inner = memoryStore();
    for (const store of [memoryStore(), { ...inner }]) {
      const engine = createIdempotency({ store });
      let serialized = 0;
      // Serializing this body would count (and store a different value): the attached text must be used instead.
      const body = withJsonText({ toJSON: () => ++serialized }, '{"from":"text"}');
      await engine.run(request('k'), async () => ({ status: 201, body }));
      const replay = await engine.run(request('k'), async () => ({ status: 500 }));
      expect(replay.kind).toBe('replayed');
      if (replay.kind !== 'replayed') return;
      expect(replay.response.body).toEqual({ from: 'text' });
      expect(serialized).toBe(0);
    }
  });
});
