import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';

const client = new Redis(REDIS_URL);
const prefix = runPrefix('resent-claim');
afterAll(async () => {
  await deleteByPrefix(client, prefix);
  client.disconnect();
});

const input = (token: string) => ({
  scope: { tenant: 't', principal: 'p', operation: 'op', key: `k-${token}` },
  fingerprint: 'f'.repeat(64),
  token,
  leaseMs: 30_000,
  retentionMs: 60_000,
});

it('a claim sent again with its own token (ioredis resends a command whose connection was killed) is still that claim, not in progress', async () => {
  const store = redisStore({ client, prefix });
  const first = await store.claim(input('token-1'));
  expect(first).toEqual({ kind: 'claimed', fence: 1, takeover: false });
  // The same command again, as a resend after CLIENT KILL delivers it: the record holds this token.
  expect(await store.claim(input('token-1'))).toEqual({ kind: 'claimed', fence: 1, takeover: false });
  // Another request on the same key, with its own token, still finds it in progress.
  const other = await store.claim({ ...input('token-2'), scope: input('token-1').scope });
  expect(other.kind).toBe('existing');
});
