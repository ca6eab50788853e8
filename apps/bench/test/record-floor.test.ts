import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, pgliteBackend } from '../src/postgres/backends.js';
import { recordFloorOperations } from '../src/postgres/record-floor.js';
import { RAW_TABLE, SCHEMA } from '../src/postgres/schema.js';
import { paymentEffect } from '../src/subjects/payment-effect.js';

let backend: Backend;

beforeAll(async () => {
  backend = await pgliteBackend();
});

afterAll(async () => {
  await backend?.close();
});

describe('the record floor contender', () => {
  it('commits, per first request, the payment and one completed record holding its response, in the bare transaction’s calls', async () => {
    const floor = recordFloorOperations(backend.counted.transaction, paymentEffect(false), 'floor');
    const before = backend.counter();
    for (const key of ['floor-a', 'floor-b', 'floor-c']) await floor.first(key);
    const after = backend.counter();
    // BEGIN, the one statement, COMMIT: three calls per request, as the business transaction alone.
    expect(after.roundTrips - before.roundTrips).toBe(9);
    const db = backend.timed.db as PGlite;
    const records = await db.query<{ idempotency_key: string; state: string; response_status: number; body: string }>(
      `SELECT idempotency_key, state, response_status, response_body::text AS body FROM ${SCHEMA}.${RAW_TABLE} ORDER BY idempotency_key`,
    );
    expect(records.rows).toEqual(
      ['floor-a', 'floor-b', 'floor-c'].map((key) => ({
        idempotency_key: key,
        state: 'succeeded',
        response_status: 201,
        body: JSON.stringify({ id: `pay_${key}`, amount: 1000, currency: 'EUR' }),
      })),
    );
    expect(await backend.paymentRows('floor-')).toBe(3);
  });
});
