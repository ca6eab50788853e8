import { Socket } from 'node:net';
import { createIdempotency } from '@oncely/core';
import { Redis } from 'ioredis';
import ioredisPackage from 'ioredis/package.json' with { type: 'json' };
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { connectionSocket, definedScript, IOREDIS_INTERNALS, unpipelinedCommand } from '../../src/ioredis/internals.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';

// The store's fast path on ioredis internals: each must be where internals.ts looks and behave as it
// needs, on the ioredis this run installed (the vitest projects run this file on ioredis 5 and 6).
const version = ioredisPackage.version;
const moved = (internal: string) => `ioredis ${version} moved ${internal}, which src/ioredis/internals.ts reaches into`;

let client: Redis;
const prefix = runPrefix('ioredis-internals');

beforeAll(async () => {
  client = new Redis(REDIS_URL, { enableAutoPipelining: true });
  await client.ping();
});

afterAll(async () => {
  await deleteByPrefix(client, prefix);
  await client.quit();
});

describe(`ioredis ${version}: the internals the store's fast path uses`, () => {
  it(`${IOREDIS_INTERNALS.builtinCommand} answers SET NX GET without joining the auto-pipeline`, async () => {
    const set = unpipelinedCommand(client, 'set');
    expect(set, moved(IOREDIS_INTERNALS.builtinCommand)).toBeTypeOf('function');
    // The control: ioredis's own `get` on this client does join it, so the queue size can tell.
    const queuedGet = client.get(`${prefix}other`);
    expect(client.autoPipelineQueueSize).toBe(1);
    await queuedGet;

    const claim = set!.call(client, `${prefix}k`, 'first', 'PX', 60_000, 'NX', 'GET');
    expect(client.autoPipelineQueueSize, moved(IOREDIS_INTERNALS.builtinCommand)).toBe(0);
    expect(await claim).toBeNull();
    expect(await set!.call(client, `${prefix}k`, 'second', 'PX', 60_000, 'NX', 'GET')).toBe('first');
  });

  it(`${IOREDIS_INTERNALS.scriptsSet} runs a defined script as one plain command`, async () => {
    const command = `oncely_internals_test_${version.replaceAll('.', '_')}`;
    client.defineCommand(command, { numberOfKeys: 1, lua: "return redis.call('SET', KEYS[1], ARGV[1], 'GET')" });
    const script = definedScript(client, command);
    expect(script, moved(IOREDIS_INTERNALS.scriptsSet)).toBeDefined();
    expect(typeof script?.execute, moved(IOREDIS_INTERNALS.scriptsSet)).toBe('function');

    // The first call on a connection is an EVAL, later ones EVALSHA: both answer through execute.
    for (const [value, previous] of [['a', null], ['b', 'a']] as const) {
      const reply = script!.execute(client, [`${prefix}script`, value], { replyEncoding: 'utf8' });
      expect(client.autoPipelineQueueSize, moved(IOREDIS_INTERNALS.scriptsSet)).toBe(0);
      expect(await reply).toBe(previous);
    }
  });

  it(`${IOREDIS_INTERNALS.stream} is the connection's socket, and corking it holds the tick's writes`, async () => {
    const socket = connectionSocket(client);
    expect(socket, moved(IOREDIS_INTERNALS.stream)).toBeInstanceOf(Socket);
    const raw = socket as Socket;
    socket!.cork();
    const reply = client.set(`${prefix}corked`, 'v');
    await new Promise((resolve) => setImmediate(resolve));
    // ioredis wrote the command (auto-pipelined, on its own next tick) into the corked socket: held there.
    expect(raw.writableCorked, moved(IOREDIS_INTERNALS.stream)).toBe(1);
    expect(raw.writableLength, moved(IOREDIS_INTERNALS.stream)).toBeGreaterThan(0);
    socket!.uncork();
    expect(await reply).toBe('OK');
  });
});

describe('without an internal the store takes the documented path', () => {
  it('an auto-pipelined client whose createBuiltinCommand is gone claims and replays through its own set', async () => {
    const bare = new Redis(REDIS_URL, { enableAutoPipelining: true });
    Object.defineProperty(bare, 'createBuiltinCommand', { value: undefined });
    expect(unpipelinedCommand(bare, 'set')).toBeUndefined();
    const engine = createIdempotency({ store: redisStore({ client: bare, prefix: `${prefix}fallback:` }) });
    const request = { tenant: 'acme', operation: 'payments.create.v1', key: 'k1', request: { amount: '10.00' } };
    let runs = 0;
    const handler = async () => ({ status: 201, body: { run: ++runs } });
    expect((await engine.run(request, handler)).kind).toBe('executed');
    const replay = await engine.run(request, handler);
    expect(replay.kind === 'replayed' && replay.response.body).toEqual({ run: 1 });
    expect(runs).toBe(1);
    await bare.quit();
  });
});
