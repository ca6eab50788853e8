import { createIdempotency, type IdempotentResponse } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandCalls, diffCommandStats, readCommandStats, redisStore } from '../../src/index.js';
import { type PrivateServer, startPrivateServer } from '../servers/private-server.js';

let server: PrivateServer;
let client: Redis;
let admin: Redis;

/** Runs `work` and returns what the server counted meanwhile; a private server, so nobody else adds to it. */
async function counted(work: () => Promise<unknown>): Promise<CommandCalls> {
  const before = await readCommandStats(admin);
  await work();
  // The reading itself (INFO) is not the store's.
  const { info: _reading, ...calls } = diffCommandStats(before, await readCommandStats(admin));
  return calls;
}

beforeAll(async () => {
  server = await startPrivateServer();
  admin = new Redis(server.url);
  client = new Redis(server.url);
  await client.ping();
});

afterAll(async () => {
  await Promise.allSettled([client.quit(), admin.quit()]);
  await server.dispose();
});

/** What a script runs inside Redis, counted under its own names, and the script call itself. */
const completeScript = { evalsha: 1, get: 1, pexpiretime: 1, time: 1, set: 1 };

describe('redis store: commands per path, counted by the server (INFO commandstats)', () => {
  const engine = () => createIdempotency({ store: redisStore({ client }), leaseMs: 30_000 });
  const request = (key: string, amount = '10.00') => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount } });

  it('the first use of a script on a connection sends its source (EVAL), later ones EVALSHA', async () => {
    const calls = await counted(() => engine().run(request('warm-up'), async () => ({ status: 201 })));
    expect(calls).toEqual({ eval: 1, get: 1, pexpiretime: 1, time: 1, set: 2 });
  });

  it('a first request is two commands: SET NX GET claims, the complete script stores the outcome', async () => {
    let executions = 0;
    const calls = await counted(() =>
      engine().run(request('first'), async () => {
        executions += 1;
        return { status: 201, body: { id: 'pay_1' } };
      }),
    );
    expect(executions).toBe(1);
    expect(calls).toEqual({ ...completeScript, set: 2 });
  });

  it('a replay and a mismatch are one SET each, with no script', async () => {
    const run = engine();
    await run.run(request('replay'), async () => ({ status: 201, body: { id: 'pay_2' } }));
    const replay = await counted(async () => expect((await run.run(request('replay'), async () => ({ status: 500 }))).kind).toBe('replayed'));
    expect(replay).toEqual({ set: 1 });

    const mismatch = await counted(async () => expect((await run.run(request('replay', '99.00'), async () => ({ status: 500 }))).kind).toBe('mismatch'));
    expect(mismatch).toEqual({ set: 1 });
  });

  it('a duplicate of an in-progress request is two commands: the SET finds it, the claim script judges the lease', async () => {
    const run = engine();
    let release!: () => void;
    const holding = run.run(request('busy'), () => new Promise<IdempotentResponse>((resolve) => (release = () => resolve({ status: 201 }))));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const duplicate = async () => expect((await run.run(request('busy'), async () => ({ status: 201 }))).kind).toBe('in_progress');
    expect(await counted(duplicate)).toEqual({ set: 1, eval: 1, get: 1, pexpiretime: 1, time: 1 });
    expect(await counted(duplicate)).toEqual({ set: 1, evalsha: 1, get: 1, pexpiretime: 1, time: 1 });
    release();
    await holding;
  });

  it('a released outcome (5xx) is two commands: claim and the release script', async () => {
    const calls = await counted(() => engine().run(request('released'), async () => ({ status: 503 })));
    expect(calls).toEqual({ set: 1, eval: 1, get: 1, pexpiretime: 1, time: 1, del: 1 });
  });
});
