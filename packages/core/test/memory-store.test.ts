import { describe, expect, it } from 'vitest';
import { manualClock, memoryStore } from '../src/index.js';

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
