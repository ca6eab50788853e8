import { NextRequest } from 'next/server';
import { describe, expect, it } from 'vitest';
import { charges, POST } from '../src/next/app/payments/route.js';

/** What Next.js does for `POST /payments`: build a NextRequest and call the route module's POST export. */
const call = (key: string | undefined, body: string) =>
  POST(
    new NextRequest('http://localhost:3000/payments', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant': 'acme', ...(key === undefined ? {} : { 'idempotency-key': key }) },
      body,
    }),
  );

describe('Next.js route handler (app/payments/route.ts with withIdempotency)', () => {
  it('the first POST with a key charges once; a retry replays the same 201, Location and body', async () => {
    const before = charges.length;
    const first = await call('"next-k1"', JSON.stringify({ amount: 10 }));
    expect(first.status).toBe(201);
    const created = await first.json();
    // The handler got the NextRequest itself: nextUrl is there.
    expect(created).toMatchObject({ amount: 10, path: '/payments' });
    const retry = await call('"next-k1"', JSON.stringify({ amount: 10 }));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(await retry.json()).toEqual(created);
    expect(charges.length).toBe(before + 1);
  });

  it('refuses what would be unsafe with problem+json: a reused key, a missing key, malformed JSON', async () => {
    const before = charges.length;
    expect((await call('next-k2', JSON.stringify({ amount: 10 }))).status).toBe(201);
    const reused = await call('next-k2', JSON.stringify({ amount: 99 }));
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toBe('application/problem+json');
    const missing = await call(undefined, JSON.stringify({ amount: 10 }));
    expect(missing.status).toBe(400);
    expect((await missing.json()).type).toBe('https://oncely.dev/problems/missing-idempotency-key');
    const malformed = await call('next-k3', '{"amount":');
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).type).toBe('https://oncely.dev/problems/invalid-request-body');
    expect(charges.length).toBe(before + 1);
  });
});
