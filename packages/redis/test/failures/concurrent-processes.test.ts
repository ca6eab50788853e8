import { createIdempotency } from '@oncely/core';
import { Redis } from 'ioredis';
import ioredisPackage from 'ioredis/package.json' with { type: 'json' };
import { afterAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { startWorker } from '../processes/workers.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';
import { rawRecord } from '../raw-record.js';

const client = new Redis(REDIS_URL);
const prefix = runPrefix('processes');

afterAll(async () => {
  await deleteByPrefix(client, prefix);
  await client.quit();
});

describe('redis store: duplicates from separate OS processes', () => {
  it('200 concurrent duplicates split across 4 processes execute the handler exactly once', async () => {
    const key = 'race-200';
    const counter = `${prefix}executions`;
    const workers = Array.from({ length: 4 }, () =>
      startWorker({ REDIS_URL, PREFIX: prefix, KEY: key, COUNTER: counter, MODE: 'race', ATTEMPTS: '50', HOLD_MS: '300' }),
    );
    const ready = await Promise.all(workers.map((worker) => worker.next('ready')));
    // The processes run the ioredis of this test project (5 or 6), not whichever the worker would import.
    expect(ready.map((message) => message.ioredis)).toEqual(workers.map(() => ioredisPackage.version));
    // Every process is connected before any of them starts: the 200 attempts really overlap.
    for (const worker of workers) worker.child.send({ type: 'go' });
    const tallies = (await Promise.all(workers.map((worker) => worker.next('done')))).map(
      (message) => message.tally as Record<string, number>,
    );
    await Promise.all(workers.map((worker) => worker.exited));

    const total = (kind: string) => tallies.reduce((sum, tally) => sum + (tally[kind] ?? 0), 0);
    expect(await client.get(counter)).toBe('1');
    expect(total('executed')).toBe(1);
    expect(total('executed') + total('in_progress') + total('replayed')).toBe(200);
    expect(Object.keys(Object.assign({}, ...tallies)).filter((kind) => kind.startsWith('error') || kind === 'mismatch')).toEqual([]);

    const winner = ready[tallies.findIndex((tally) => tally.executed === 1)]!.pid;
    const store = redisStore({ client, prefix });
    const scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key };
    expect((await rawRecord(client, store.keyOf(scope)))?.state).toBe('succeeded');
    expect((await store.get(scope))?.response?.body).toEqual({ pid: winner });

    // Late retries from yet another client replay the winner's response and run nothing.
    const engine = createIdempotency({ store });
    const late = await Promise.all(
      Array.from({ length: 20 }, () =>
        engine.run({ ...scope, request: { amount: '10.00' } }, async () => {
          await client.incr(counter);
          return { status: 201 };
        }),
      ),
    );
    for (const result of late) expect(result).toEqual({ kind: 'replayed', state: 'succeeded', response: { status: 201, body: { pid: winner } } });
    expect(await client.get(counter)).toBe('1');
  });
});
