import { createIdempotency } from '@oncely/core';
import { withJsonText } from '@oncely/core/adapter';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/index.js';
import { rawRecord } from '../raw-record.js';
import { deleteByPrefix, REDIS_URL, runPrefix } from '../servers/shared-server.js';

const client = new Redis(REDIS_URL);
const prefix = runPrefix('text');
const store = redisStore({ client, prefix });
const engine = createIdempotency({ store });
let counter = 0;
const request = () => ({ tenant: 'acme', operation: 'payments.create.v1', key: `text-${++counter}`, request: { n: 1 } });

afterAll(async () => {
  await deleteByPrefix(client, prefix);
  await client.quit();
});

describe('redis store: the response reaches Redis as the engine serialized it once', () => {
  it('a body marked with its JSON text is written as that text, never serialized again', async () => {
    let serialized = 0;
    const body = withJsonText({ toJSON: () => ++serialized }, '{"from":"text"}');
    const scoped = request();
    await engine.run(scoped, async () => ({ status: 201, headers: { 'x-a': '1' }, body }));
    expect(serialized).toBe(0);
    expect((await rawRecord(client, store.keyOf({ ...scoped, principal: '' })))?.response).toEqual({ status: 201, headers: { 'x-a': '1' }, body: { from: 'text' } });
    const replay = await engine.run(scoped, async () => ({ status: 500 }));
    expect(replay.kind === 'replayed' && replay.response.body).toEqual({ from: 'text' });
  });

  it('any response is stored as JSON.stringify would have written it, and replays equal to its JSON', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.option(fc.string(), { nil: undefined }), async (value, resourceId) => {
        const scoped = request();
        const response = { status: 200, headers: { 'content-type': 'application/json' }, body: { value }, ...(resourceId === undefined ? {} : { resourceId }) };
        await engine.run(scoped, async () => response);
        const raw = await client.get(store.keyOf({ ...scoped, principal: '' }));
        expect(JSON.parse(raw!).response).toEqual(JSON.parse(JSON.stringify(response)));
        const replay = await engine.run(scoped, async () => ({ status: 500 }));
        expect(replay.kind === 'replayed' && replay.response).toEqual(JSON.parse(JSON.stringify(response)));
      }),
      { numRuns: 100 },
    );
  });
});
