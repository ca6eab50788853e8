import type { INestApplication } from '@nestjs/common';
import { createIdempotency, memoryStore } from '@oncely/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createExpressApp } from '../src/nest/express-app.js';
import { createFastifyApp } from '../src/nest/fastify-app.js';
import { ledger } from '../src/nest/payments.controller.js';

const adapters = [
  { name: 'Express adapter', create: createExpressApp },
  { name: 'Fastify adapter', create: createFastifyApp },
];

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const post = (url: string, key: string | undefined, body: string) =>
  fetch(`${url}/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tenant': 'acme', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body,
  });

describe.each(adapters)('NestJS 11, $name', ({ create }) => {
  it('a retried POST runs the controller once and replays its 201; a reused key and a missing key are problems', async () => {
    const store = memoryStore();
    app = await create(createIdempotency({ store }));
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const before = ledger.length;
    const first = await post(url, '"nest-k1"', JSON.stringify({ amount: 10 }));
    expect(first.status).toBe(201);
    const created = await first.json();
    expect(created).toMatchObject({ amount: 10 });
    const retry = await post(url, 'nest-k1', JSON.stringify({ amount: 10 }));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(created);
    const reused = await post(url, 'nest-k1', JSON.stringify({ amount: 11 }));
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toBe('application/problem+json');
    const missing = await post(url, undefined, JSON.stringify({ amount: 10 }));
    expect(missing.status).toBe(400);
    expect((await missing.json()).type).toBe('https://oncely.dev/problems/missing-idempotency-key');
    expect(ledger.length).toBe(before + 1);
    expect(store.size).toBe(1);
  });
});
