import type { IdempotencyStore, MemoryStore } from '@oncely/core';
import { expect } from 'vitest';
import { PROBLEM_TYPE_BASE, type ProblemCode } from '../../src/index.js';
import type { HandlerInput, NeutralResponse, RouteOptions, RouteSpec } from './bindings.js';
import type { Received } from './send.js';

/** The business state the tests assert: every charge the handler actually made. */
export interface Ledger {
  readonly charges: { readonly id: string; readonly tenant: string; readonly amount: number }[];
}

export const newLedger = (): Ledger => ({ charges: [] });

/** `POST /payments`: records a charge, answers 201 with a body, a Location, a cookie and a trace id. */
export function paymentRoute(ledger: Ledger, options: Partial<RouteOptions> = {}, gate?: Promise<void>): RouteSpec {
  return {
    method: 'POST',
    path: '/payments',
    options: { operation: 'payments.create.v1', ...options },
    async handle({ body, caller }: HandlerInput): Promise<NeutralResponse> {
      await gate;
      const amount = Number((body as { amount?: unknown } | undefined)?.amount);
      const id = `pay_${ledger.charges.length + 1}`;
      ledger.charges.push({ id, tenant: caller.tenant, amount });
      return {
        status: 201,
        headers: {
          location: `/payments/${id}`,
          'x-trace-id': `trace-${Math.random()}`,
          'set-cookie': ['session=secret; HttpOnly', 'theme=dark'],
        },
        body: { kind: 'json', value: { id, tenant: caller.tenant, amount, note: 'naïve café ✓ 😀' } },
      };
    },
  };
}

/** Asserts an RFC 9457 problem with oncely's stable type for `code`, and returns it. */
export function expectProblem(response: Received, code: ProblemCode, status: number): Record<string, unknown> {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json');
  const problem = response.json() as Record<string, unknown>;
  expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}${code}`);
  expect(problem.status).toBe(status);
  expect(typeof problem.title).toBe('string');
  expect(typeof problem.detail).toBe('string');
  return problem;
}

/** A deferred promise, to hold a handler in flight. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => {
    resolve = ok;
  });
  return { promise, resolve };
}

/**
 * A memory store whose `claim`, `complete` or `get` fails like a dropped connection: fault injection for
 * the fail-closed path (the real-server adapters run their own outage tests).
 */
export function failingStore(
  inner: MemoryStore,
  failing: { readonly claim?: boolean; readonly complete?: boolean; readonly get?: boolean },
): IdempotencyStore {
  const outage = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
  return {
    name: 'flaky-memory',
    capabilities: inner.capabilities,
    claim: (input) => (failing.claim ? outage() : inner.claim(input)),
    complete: (input) => (failing.complete ? outage() : inner.complete(input)),
    release: (input) => inner.release(input),
    extend: (input) => inner.extend(input),
    get: (scope) => (failing.get ? outage() : inner.get(scope)),
    purgeExpired: (limit) => inner.purgeExpired(limit),
    close: () => inner.close(),
  };
}
