import { createIdempotency, memoryStore } from '@oncely/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE, type ProblemCode } from '../src/index.js';
import { bindings, type RouteSpec, withServer } from './support/bindings.js';
import { send } from './support/send.js';

const PROBLEM_CODES: readonly ProblemCode[] = [
  'missing-idempotency-key',
  'invalid-idempotency-key',
  'idempotency-key-reused',
  'request-in-progress',
  'invalid-request',
  'invalid-request-body',
  'unsupported-request-body',
  'request-body-too-large',
  'storage-unavailable',
  'streaming-response-refused',
  'idempotency-key-not-found',
];

const char = (min: number, max: number) => fc.integer({ min, max }).map((code) => String.fromCharCode(code));
/** Everything node:http lets a client put in a field value: HTAB, SP, VCHAR and obs-text. */
const fieldText = (maxLength: number) =>
  fc.string({ unit: fc.oneof(fc.constant('\t'), char(0x20, 0x7e), char(0x80, 0xff)), maxLength });
const visible = (minLength: number, maxLength: number) => fc.string({ unit: char(0x21, 0x7e), minLength, maxLength });
const pool = ['k-1', 'k-2', 'k-3'];

const keyHeader = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(...pool),
  fc.constantFrom(...pool).map((key) => `"${key}"`),
  fieldText(40),
  fieldText(40).map((text) => `"${text}"`),
  visible(250, 260),
  visible(1, 30).map((text) => `"${text}`),
);

/** Object keys a JSON parser hardened against prototype pollution (Fastify's) refuses are left out. */
const safeKey = fc.string({ maxLength: 8 }).filter((key) => key !== '__proto__' && key !== 'constructor' && key !== 'prototype');
const jsonValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 20 }),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(safeKey, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const body = fc.oneof(
  fc.constant(undefined),
  // A fixed body makes retries with a pooled key land on replays, not only on mismatches.
  fc.constant({ type: 'application/json', text: '{"amount":10}' }),
  jsonValue.map((value) => ({ type: 'application/json', text: JSON.stringify(value) })),
  fc.constantFrom('{"a":"\\ud800"}', '{"n":1e400}', '[1e309]').map((text) => ({ type: 'application/json', text })),
  fc.string({ maxLength: 60 }).map((text) => ({ type: 'text/plain; charset=utf-8', text })),
);

const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE');

describe.each(bindings)('$name: fuzzing headers, bodies and methods', (binding) => {
  it('never answers 5xx, never records rejected input, and every error is valid problem+json', async () => {
    const store = memoryStore();
    let calls = 0;
    const routes: RouteSpec[] = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).map((verb) => ({
      method: verb,
      path: '/fuzz',
      options: { operation: 'fuzz.v1' },
      handle: async () => ({ status: 201, body: { kind: 'json', value: { call: ++calls } } }),
    }));
    await withServer(binding, createIdempotency({ store }), routes, async (url) => {
      await fc.assert(
        fc.asyncProperty(method, keyHeader, body, async (verb, key, payload) => {
          const recordsBefore = store.size;
          const callsBefore = calls;
          const response = await send(url, '/fuzz', {
            method: verb,
            headers: {
              authorization: 'Bearer acme/alice',
              ...(key === undefined ? {} : { 'idempotency-key': key }),
              ...(payload === undefined ? {} : { 'content-type': payload.type }),
            },
            ...(payload === undefined ? {} : { body: payload.text }),
          });
          expect(response.status).toBeLessThan(500);
          if (response.headers['content-type'] === 'application/problem+json') {
            const problem = response.json() as Record<string, unknown>;
            expect(PROBLEM_CODES.map((code) => `${PROBLEM_TYPE_BASE}${code}`)).toContain(problem.type);
            expect(problem.status).toBe(response.status);
            expect(typeof problem.title).toBe('string');
            expect(typeof problem.detail).toBe('string');
            expect(response.status).toBeGreaterThanOrEqual(400);
            // Rejected input leaves nothing behind: no record, no execution.
            expect(store.size).toBe(recordsBefore);
            expect(calls).toBe(callsBefore);
          } else {
            expect(response.status).toBe(201);
            const replayed = response.headers['idempotent-replayed'] === 'true';
            expect(calls).toBe(replayed ? callsBefore : callsBefore + 1);
            expect(store.size).toBeGreaterThanOrEqual(recordsBefore);
          }
        }),
        { numRuns: 150 },
      );
    });
  });
});

/** JSON text as clients may send it: duplicate and prototype-named keys, extreme numbers, any string. */
const memberName = fc.oneof(
  fc.constantFrom('"__proto__"', '"constructor"', '"prototype"', '"amount"', '"a"', '"a"'),
  fc.string({ maxLength: 6 }).map((name) => JSON.stringify(name)),
);
const numberText = fc.oneof(
  fc.constantFrom('1e400', '-1e400', '-0', '0.1', '1e-400', '12345678901234567890123', '1.7976931348623157e308', '5e-324'),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.integer().map(String),
);
const stringText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }).map((text) => JSON.stringify(text)),
  fc.constantFrom('"\\ud800"', '"\\udfff x"', '"\\u0000"', '"naïve ☃ 😀"'),
);
const jsonText = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 5 },
    numberText,
    stringText,
    fc.constantFrom('true', 'false', 'null'),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc.array(fc.tuple(memberName, tie('value')), { maxLength: 4 }).map((members) => `{${members.map(([name, value]) => `${name}:${value}`).join(',')}}`),
  ),
})).value;
const deepText = fc.oneof(fc.integer({ min: 1, max: 600 }), fc.integer({ min: 600, max: 20_000 })).chain((depth) =>
  fc.constantFrom('[', '{"a":').map((open) => `${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`),
);
const wideText = fc.integer({ min: 50, max: 3_000 }).map((width) => `{${Array.from({ length: width }, (_, index) => `"k${index}":${index}`).join(',')}}`);
const largeText = fc.constantFrom(10_000, 300_000, 1_100_000).map((size) => JSON.stringify({ amount: 1, note: 'x'.repeat(size) }));
const requestBody = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(jsonText, deepText, wideText).map((text) => ({ type: 'application/json', text })) },
  { weight: 1, arbitrary: largeText.map((text) => ({ type: 'application/json', text })) },
  { weight: 1, arbitrary: jsonText.map((text) => ({ type: 'application/x-www-form-urlencoded', text: `amount=${encodeURIComponent(text)}&a=1&a=2` })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((text) => ({ type: 'text/plain; charset=utf-8', text })) },
);

describe.each(bindings)('$name: fuzzing request bodies', (binding) => {
  it('every body gets a 2xx or a 4xx problem, and a refused body leaves no record and runs nothing', async () => {
    const store = memoryStore();
    let calls = 0;
    let keys = 0;
    const route: RouteSpec = {
      method: 'POST',
      path: '/fuzz',
      options: { operation: 'fuzz.bodies.v1' },
      handle: async () => ({ status: 201, body: { kind: 'json', value: { call: ++calls } } }),
    };
    await withServer(binding, createIdempotency({ store }), [route], async (url) => {
      await fc.assert(
        fc.asyncProperty(requestBody, async (payload) => {
          const recordsBefore = store.size;
          const callsBefore = calls;
          const response = await send(url, '/fuzz', {
            method: 'POST',
            headers: { authorization: 'Bearer acme/alice', 'idempotency-key': `body-${keys++}`, 'content-type': payload.type },
            body: payload.text,
          });
          expect(response.status).toBeLessThan(500);
          if (response.status >= 400) {
            expect(response.headers['content-type']).toBe('application/problem+json');
            const problem = response.json() as Record<string, unknown>;
            expect(PROBLEM_CODES.map((code) => `${PROBLEM_TYPE_BASE}${code}`)).toContain(problem.type);
            expect(problem.status).toBe(response.status);
            expect(store.size).toBe(recordsBefore);
            expect(calls).toBe(callsBefore);
          } else {
            expect(response.status).toBe(201);
            expect(store.size).toBe(recordsBefore + 1);
            expect(calls).toBe(callsBefore + 1);
          }
        }),
        { numRuns: 80 },
      );
    });
  });
});
