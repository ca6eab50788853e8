// A separate OS process running the engine on the BUILT package, driven by its parent over IPC.
// Modes: `race` runs ATTEMPTS concurrent duplicates when told to go; `hold` claims once and keeps
// the handler open until told to finish (the parent SIGKILLs or SIGSTOPs it meanwhile).
import { createRequire } from 'node:module';
import { createIdempotency } from '@oncely/core';
import { redisStore } from '../../dist/index.js';

// The ioredis of the parent's test project ('ioredis6' is the npm alias of ioredis 6).
const ioredis = process.env.ONCELY_IOREDIS ?? 'ioredis';
const { Redis } = await import(ioredis);
const ioredisVersion = createRequire(import.meta.url)(`${ioredis}/package.json`).version;

const { REDIS_URL, PREFIX, KEY, MODE, ATTEMPTS = '1', LEASE_MS = '30000', HOLD_MS = '0', COUNTER } = process.env;
const client = new Redis(REDIS_URL);
const engine = createIdempotency({ store: redisStore({ client, prefix: PREFIX }), leaseMs: Number(LEASE_MS) });
const request = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: KEY, request: { amount: '10.00' } };
const send = (message) => new Promise((resolve) => process.send(message, resolve));
const nextMessage = (type) =>
  new Promise((resolve) => {
    const listen = (message) => {
      if (message?.type !== type) return;
      process.off('message', listen);
      resolve(message);
    };
    process.on('message', listen);
  });
const outcome = (promise) => promise.then((result) => result.kind, (error) => `error:${error?.code ?? error?.message}`);

await client.ping();
if (MODE === 'race') {
  const go = nextMessage('go');
  await send({ type: 'ready', pid: process.pid, ioredis: ioredisVersion });
  await go;
  const kinds = await Promise.all(
    Array.from({ length: Number(ATTEMPTS) }, () =>
      outcome(
        engine.run(request, async () => {
          // Counted in Redis, where the parent reads it: the business effect of this handler.
          await client.incr(COUNTER);
          await new Promise((resolve) => setTimeout(resolve, Number(HOLD_MS)));
          return { status: 201, body: { pid: process.pid } };
        }),
      ),
    ),
  );
  const tally = {};
  for (const kind of kinds) tally[kind] = (tally[kind] ?? 0) + 1;
  await send({ type: 'done', tally });
} else if (MODE === 'hold') {
  const kind = await outcome(
    engine.run(request, async (context) => {
      await client.incr(COUNTER);
      const finish = nextMessage('finish');
      await send({ type: 'in-handler', token: context.token, fence: context.fence });
      await finish;
      return { status: 201, body: { pid: process.pid } };
    }),
  );
  await send({ type: 'done', kind });
}
await client.quit();
process.disconnect();
