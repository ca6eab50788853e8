import { isStorageError } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { runJournalConformance } from '@oncely/testkit';
import { redisJournal } from '../../src/index.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';

const client = new Redis(REDIS_URL);
const pipelined = new Redis(REDIS_URL, { enableAutoPipelining: true });
const prefixes: string[] = [];
/** A prefix per journal: the listing tests count every entry of their journal. */
const freshPrefix = (label: string) => {
  const prefix = runPrefix(`journal-${label}`);
  prefixes.push(prefix);
  return prefix;
};

afterAll(async () => {
  for (const prefix of prefixes) await deleteByPrefix(client, `{${prefix}}`);
  await Promise.all([client.quit(), pipelined.quit()]);
});

runJournalConformance({ describe, it, expect }, {
  name: 'redis journal (ioredis)',
  createJournal: () => redisJournal({ client, prefix: freshPrefix('plain') }),
  // A second connection proves the entry lives in Redis, not in this process.
  reopen: async (journal) => {
    const other = new Redis(REDIS_URL);
    const reopened = redisJournal({ client: other, prefix: journal.prefix });
    return { ...reopened, close: async () => void (await other.quit()) };
  },
});

runJournalConformance({ describe, it, expect }, {
  name: 'redis journal (enableAutoPipelining)',
  createJournal: () => redisJournal({ client: pipelined, prefix: freshPrefix('pipelined') }),
  numRuns: 10,
});

describe('redis journal: storage', () => {
  it('keeps each entry in a hash and the open ones in the pending index, all under one hash tag', async () => {
    const prefix = freshPrefix('raw');
    const journal = redisJournal({ client, prefix });
    const { entry } = await journal.begin('order-1', { request: { amount: 10 } });
    const raw = await client.hgetall(`{${prefix}}:e:order-1`);
    expect(raw).toMatchObject({ key: entry.key, state: 'pending', attempts: '0', request: '{"amount":10}' });
    expect(await client.zscore(`{${prefix}}:pending`, 'order-1')).toBe(raw.updated_at);
    await journal.markUnknown('order-1', 'timeout');
    expect(await client.zscore(`{${prefix}}:pending`, 'order-1')).toBe(null);
    expect(await client.zscore(`{${prefix}}:unknown`, 'order-1')).toBe((await client.hget(`{${prefix}}:e:order-1`, 'updated_at'))!);
    await journal.complete('order-1', { state: 'succeeded', value: { id: 'pay_1' } });
    expect(await client.zcard(`{${prefix}}:unknown`)).toBe(0);
    expect(await client.zcard(`{${prefix}}:settled`)).toBe(1);
    expect(await client.hget(`{${prefix}}:e:order-1`, 'data')).toBe('{"id":"pay_1"}');
  });

  it('a server that cannot be reached is a StorageError, never a silent miss', async () => {
    const dead = new Redis({ port: 1, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
    const journal = redisJournal({ client: dead, prefix: freshPrefix('dead') });
    const error = await journal.begin('order-x').catch((caught: unknown) => caught);
    expect(isStorageError(error)).toBe(true);
    dead.disconnect();
  });

  it('rejects a prefix with braces, which would break the hash tag', () => {
    expect(() => redisJournal({ client, prefix: 'a{b}' })).toThrow(/braces/);
  });
});
