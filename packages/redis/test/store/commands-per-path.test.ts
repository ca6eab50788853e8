import { createIdempotency, type IdempotentResponse } from '@oncely/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandCalls, diffCommandStats, readCommandStats, redisStore } from '../../src/index.js';
import { type PrivateServer, startPrivateServer } from '../servers/private-server.js';

/** Commands the client sent (the rest ran inside the scripts), and the stat reading itself. */
const SENT = ['eval', 'evalsha', 'wait', 'exists'];
const sent = (calls: CommandCalls) => Object.fromEntries(Object.entries(calls).filter(([name]) => SENT.includes(name)));

let server: PrivateServer;
let client: Redis;
let admin: Redis;

/** Runs `work` and returns what the server counted meanwhile; a private server, so nobody else adds to it. */
async function counted(work: () => Promise<unknown>): Promise<CommandCalls> {
  const before = await readCommandStats(admin);
  await work();
  return diffCommandStats(before, await readCommandStats(admin));
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

describe('redis store: commands per path, counted by the server (INFO commandstats)', () => {
  const engine = () => createIdempotency({ store: redisStore({ client }), leaseMs: 30_000 });
  const request = (key: string, amount = '10.00') => ({ tenant: 'acme', operation: 'payments.create.v1', key, request: { amount } });

  it('the first use of each script on a connection sends its source (EVAL), later ones EVALSHA', async () => {
    const calls = await counted(() => engine().run(request('warm-up'), async () => ({ status: 201 })));
    expect(sent(calls)).toEqual({ eval: 2 });
  });

  it('a first request is two commands: claim and complete', async () => {
    let executions = 0;
    const calls = await counted(() =>
      engine().run(request('first'), async () => {
        executions += 1;
        return { status: 201, body: { id: 'pay_1' } };
      }),
    );
    expect(executions).toBe(1);
    expect(sent(calls)).toEqual({ evalsha: 2 });
    // Inside the scripts: TIME and HMGET twice, then the writes.
    expect(calls.time).toBe(2);
    expect(calls.hmget).toBe(2);
  });

  it('a replay, an in-progress duplicate and a mismatch are one command each', async () => {
    const run = engine();
    await run.run(request('replay'), async () => ({ status: 201, body: { id: 'pay_2' } }));
    const replay = await counted(async () => expect((await run.run(request('replay'), async () => ({ status: 500 }))).kind).toBe('replayed'));
    expect(sent(replay)).toEqual({ evalsha: 1 });
    expect(replay.hset ?? 0).toBe(0);

    const mismatch = await counted(async () => expect((await run.run(request('replay', '99.00'), async () => ({ status: 500 }))).kind).toBe('mismatch'));
    expect(sent(mismatch)).toEqual({ evalsha: 1 });

    let release!: () => void;
    const holding = run.run(request('busy'), () => new Promise<IdempotentResponse>((resolve) => (release = () => resolve({ status: 201 }))));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const busy = await counted(async () => expect((await run.run(request('busy'), async () => ({ status: 201 }))).kind).toBe('in_progress'));
    expect(sent(busy)).toEqual({ evalsha: 1 });
    release();
    await holding;
  });

  it('a released outcome (5xx) is two commands: claim and release', async () => {
    const calls = await counted(() => engine().run(request('released'), async () => ({ status: 503 })));
    expect(sent(calls)).toEqual({ evalsha: 1, eval: 1 });
    expect(calls.del).toBe(1);
  });
});
