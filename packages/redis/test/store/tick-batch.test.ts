import { createIdempotency } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { type PrivateServer, startPrivateServer } from '../servers/private-server.js';

let server: PrivateServer;
let admin: Redis;

beforeAll(async () => {
  server = await startPrivateServer();
  admin = new Redis(server.url);
});

afterAll(async () => {
  await admin.quit();
  await server.dispose();
});

/** Counts the writes that reach the client's socket (Node's `_write` / `_writev`), not the commands. */
function countSocketWrites(client: Redis): () => number {
  const socket = client.stream as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  let writes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method];
    socket[method] = function (this: unknown, ...args: unknown[]) {
      writes += 1;
      return original.apply(this, args);
    };
  }
  return () => writes;
}

/** Read events the server processed (INFO stats); the INFO call itself is one of them. */
async function serverReads(): Promise<number> {
  const info = await admin.info('stats');
  return Number(/total_reads_processed:(\d+)/.exec(info)?.[1]);
}

/** Both kinds of standalone client: the store batches its own commands on each. */
const CLIENTS = [
  ['a plain client', false],
  ['a client with enableAutoPipelining (the store sends past it)', true],
] as const;

/** A connected client, so the store's first command finds the socket ready to cork. */
async function connected(enableAutoPipelining = false): Promise<Redis> {
  const client = new Redis(server.url, { enableAutoPipelining });
  await client.ping();
  return client;
}

const request = (key: string) => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount: '10.00' } });

describe('redis store: commands sent in one tick share socket writes', () => {
  it.each(CLIENTS)('32 concurrent replays through %s leave in 4 writes (8 commands each) and are all answered', async (_, enableAutoPipelining) => {
    const client = await connected(enableAutoPipelining);
    const engine = createIdempotency({ store: redisStore({ client, prefix: `batch${enableAutoPipelining}:` }) });
    const keys = Array.from({ length: 32 }, (_, index) => `key-${index}`);
    for (const key of keys) await engine.run(request(key), async () => ({ status: 201, body: { key } }));

    const writes = countSocketWrites(client);
    const readsBefore = await serverReads();
    const results = await Promise.all(keys.map((key) => engine.run(request(key), async () => ({ status: 500 }))));
    const reads = (await serverReads()) - readsBefore - 1;

    expect(results.map((result) => (result.kind === 'replayed' ? result.response.body : result.kind))).toEqual(keys.map((key) => ({ key })));
    expect(writes()).toBe(4);
    expect(reads).toBeLessThanOrEqual(4);
    await client.quit();
  });

  it.each(CLIENTS)('32 concurrent script calls (store.get) through %s leave in 4 writes and read every record', async (_, enableAutoPipelining) => {
    const client = await connected(enableAutoPipelining);
    const store = redisStore({ client, prefix: `get${enableAutoPipelining}:` });
    const engine = createIdempotency({ store });
    const scopes = Array.from({ length: 32 }, (_, index) => ({ tenant: 'acme', principal: '', operation: 'payments.create.v1', key: `g${index}` }));
    for (const scope of scopes) await engine.run(request(scope.key), async () => ({ status: 201, body: scope.key }));
    // The connection's first call of a script is an EVAL; the burst below is then all EVALSHA.
    await store.get(scopes[0]!);

    const writes = countSocketWrites(client);
    const records = await Promise.all(scopes.map((scope) => store.get(scope)));
    expect(records.map((record) => (record?.state === 'succeeded' ? record.response?.body : record?.state))).toEqual(scopes.map((scope) => scope.key));
    expect(writes()).toBe(4);
    await client.quit();
  });

  it('the same requests one after another are one write each: a lone command is never held back', async () => {
    const client = await connected();
    const engine = createIdempotency({ store: redisStore({ client, prefix: 'lone:' }) });
    const writes = countSocketWrites(client);
    for (const key of ['a', 'b', 'c']) expect((await engine.run(request(key), async () => ({ status: 201 }))).kind).toBe('executed');
    // Claim and complete per request.
    expect(writes()).toBe(6);
    await client.quit();
  });
});
