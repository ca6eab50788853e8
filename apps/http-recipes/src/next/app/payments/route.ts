import { createIdempotency, memoryStore } from '@oncely/core';
import { withIdempotency } from '@oncely/http';
import type { NextRequest } from 'next/server';

// One engine per server process; use postgresStore or redisStore when Next runs on more than one.
const engine = createIdempotency({ store: memoryStore() });

/** Charges recorded by this module, for the test to count executions (a stand-in for the payment provider). */
export const charges: { id: string; amount: number }[] = [];

/** `app/payments/route.ts`: Next.js calls `POST(request)` with a `NextRequest`. */
export const POST = withIdempotency(
  async (request: NextRequest) => {
    const { amount } = (await request.json()) as { amount: number };
    const charge = { id: `pay_${charges.length + 1}`, amount };
    charges.push(charge);
    return Response.json({ ...charge, path: request.nextUrl.pathname }, { status: 201, headers: { location: `/payments/${charge.id}` } });
  },
  {
    engine,
    operation: 'payments.create.v1',
    // Use your authentication here (a session cookie, a bearer token): never the key.
    scope: (request) => ({ tenant: request.headers.get('x-tenant') ?? 'demo' }),
  },
);
