import { createIdempotency, isOncelyError, memoryStore } from '@oncely/core';
import type { Request as ExpressRequest } from 'express';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { expressIdempotencyContext } from '../src/express.js';
import { fastifyIdempotencyContext } from '../src/fastify.js';
import { withIdempotency } from '../src/index.js';

// Misuse at run time is invalid_state; invalid_option is kept for options refused at setup.
describe('misuse at run time is invalid_state', () => {
  const code = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return isOncelyError(error) ? error.code : String(error);
    }
    return 'no error';
  };

  it('reading the idempotency context of a request the middleware or plugin never saw', () => {
    expect(code(() => expressIdempotencyContext({} as ExpressRequest))).toBe('invalid_state');
    expect(code(() => fastifyIdempotencyContext({} as FastifyRequest))).toBe('invalid_state');
  });

  it('a validate callback that answers a status outside 4xx', async () => {
    const handler = withIdempotency(async () => new Response('ok'), {
      engine: createIdempotency({ store: memoryStore() }),
      operation: 'report.v1',
      scope: () => ({ tenant: 't' }),
      validate: () => ({ kind: 'invalid', detail: 'no', status: 200 }),
    });
    const request = new Request('http://x/report', { method: 'POST', headers: { 'idempotency-key': 'k' }, body: '{}' });
    const error = await handler(request).then(
      () => 'answered',
      (caught: unknown) => (isOncelyError(caught) ? caught.code : String(caught)),
    );
    expect(error).toBe('invalid_state');
  });
});
