import type { Request, Response } from 'express';
import { type IdempotencyResource, IdempotencyService } from 'express-idempotency';
import RedisAdapterModule from 'express-idempotency-redis-adapter';
import { type IdempotentSubject, PAYMENT_REQUEST } from '../subjects/subject.js';

/**
 * The parts of Express's `req` and `res` that the middleware and the route touch, and nothing
 * more: `req.get`, `headers`, `body`, `method`, `query`, `url`; `res.setHeader`, `getHeaders`,
 * `status`, `send`, `statusCode`. Driving the middleware in-process keeps HTTP parsing out of a
 * comparison whose other contenders have no HTTP either.
 */
function exchange(headerName: string, key: string) {
  const headers: Record<string, string> = { [headerName]: key, 'content-type': 'application/json' };
  const request = {
    headers,
    body: { ...PAYMENT_REQUEST },
    method: 'POST',
    query: {},
    url: '/payments',
    get: (name: string) => headers[name.toLowerCase()],
  };
  const responseHeaders: Record<string, string> = {};
  const response = {
    statusCode: 200,
    sent: false,
    setHeader(name: string, value: string) {
      responseHeaders[name.toLowerCase()] = value;
      return response;
    },
    getHeaders: () => ({ ...responseHeaders }),
    status(code: number) {
      response.statusCode = code;
      return response;
    },
    send(_body: unknown) {
      response.sent = true;
      return response;
    },
  };
  return { request, response };
}

/**
 * `express-idempotency` with `express-idempotency-redis-adapter` (node-redis 1.x). Its middleware
 * reads the key (GET), creates the record when absent (SET), and saves the response after `send`
 * without awaiting it (SET): a check-then-act claim. Per its README, the route skips work when
 * `isHit(req)` says the middleware already answered.
 */
export async function expressIdempotencySubject(redisUrl: string, prefix: string): Promise<IdempotentSubject> {
  // A CommonJS module with `exports.default` and no `__esModule` flag: Node hands ESM the exports object.
  const RedisAdapter =
    (RedisAdapterModule as unknown as { default?: typeof RedisAdapterModule }).default ?? RedisAdapterModule;
  const adapter = new RedisAdapter({ connectionConfig: { url: redisUrl } });
  await adapter.connect();
  const pending = new Set<Promise<void>>();
  // The middleware fires its completion write and forgets it; track it so counts and replays see it.
  const dataAdapter = {
    findByIdempotencyKey: (key: string) => adapter.findByIdempotencyKey(key),
    create: (resource: IdempotencyResource) => adapter.create(resource),
    delete: (key: string) => adapter.delete(key),
    update(resource: IdempotencyResource) {
      const write = adapter.update(resource).finally(() => pending.delete(write));
      pending.add(write);
      return write;
    },
  };
  const service = new IdempotencyService({ dataAdapter });
  return {
    name: 'express-idempotency',
    async execute(key, effect) {
      const { request, response } = exchange('idempotency-key', `${prefix}:express-idempotency:${key}`);
      const req = request as unknown as Request;
      const res = response as unknown as Response;
      let nextError: unknown;
      await service.provideMiddlewareFunction(req, res, (error?: unknown) => {
        nextError = error;
      });
      if (nextError !== undefined) {
        return response.statusCode === 409
          ? { kind: 'in_progress' }
          : { kind: 'rejected', reason: String(response.statusCode) };
      }
      if (service.isHit(req)) return { kind: 'replayed' };
      const result = await effect();
      res.status(result.status).send(result.body);
      return { kind: 'executed' };
    },
    async settle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    close: () => adapter.disconnect(),
  };
}
