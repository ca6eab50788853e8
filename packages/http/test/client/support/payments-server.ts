import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIdempotency } from '@oncely/core';
import { migrate, postgresStore } from '@oncely/postgres';
import pg from 'pg';
import { withIdempotency } from '../../../src/index.js';
import { type PageAssets, serveAsset } from '../../browser/support/page-server.js';

/** The shared server; every run writes only inside a schema it creates and drops. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * What the next request meets before (or after) the real endpoint: `drop` lets the charge commit, then
 * destroys the socket so the response is lost; a status answers without reaching the endpoint; `hold`
 * waits before the endpoint sees the request (a slow network, a request still in flight).
 */
export type Fault =
  | { readonly kind: 'drop' }
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string }
  | { readonly kind: 'hold'; readonly ms: number };

/** A payments endpoint behind `withIdempotency`, on real PostgreSQL, that counts its effects. */
export interface PaymentsServer {
  readonly url: string;
  readonly pool: pg.Pool;
  readonly schema: string;
  /** `Idempotency-Key` field values in arrival order. */
  readonly seenKeys: string[];
  /** Faults applied to the next requests, one each, in order. */
  readonly faults: Fault[];
  /** Charges in the database: the business effect, counted where it lives. */
  charges(): Promise<number>;
  close(): Promise<void>;
}

/** Starts the server; `assets` are served for GET on the same origin (a test page that calls the endpoint). */
export async function startPaymentsServer(label: string, options: { readonly assets?: PageAssets } = {}): Promise<PaymentsServer> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
  pool.on('error', () => undefined);
  const schema = `oncely_client_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  await migrate(pool, { schema });
  await pool.query(`CREATE TABLE "${schema}".charges (id bigserial PRIMARY KEY, amount integer NOT NULL)`);
  const store = postgresStore({ db: pool, schema });
  const engine = createIdempotency({ store });
  const endpoint = withIdempotency<typeof store>(
    async (request, context) => {
      const { amount } = (await request.json()) as { amount: number };
      if (amount <= 0) return Response.json({ error: 'amount must be positive' }, { status: 422 });
      if (context.kind !== 'transaction') throw new Error('expected transactional mode');
      const { rows } = await context.tx.query<{ id: string }>(`INSERT INTO "${schema}".charges (amount) VALUES ($1) RETURNING id`, [amount]);
      return Response.json({ id: `ch_${rows[0]!.id}`, amount }, { status: 201 });
    },
    { engine, operation: 'payments.create.v1', mode: 'transaction', scope: () => ({ tenant: 'acme' }) },
  );

  const seenKeys: string[] = [];
  const faults: Fault[] = [];
  const server = createServer(async (req, res) => {
    if (options.assets) {
      // A new connection per exchange: Chromium resends a request by itself, once, when a reused
      // keep-alive connection dies without an answer, which would hide the page's own retries.
      res.setHeader('connection', 'close');
      if (req.method === 'GET') {
        if (!serveAsset(options.assets, req, res)) res.writeHead(404).end();
        return;
      }
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seenKeys.push(String(req.headers['idempotency-key']));
    const fault = faults.shift();
    if (fault?.kind === 'hold') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    if (fault?.kind === 'status') {
      res.writeHead(fault.status, fault.retryAfter ? { 'retry-after': fault.retryAfter } : {});
      res.end();
      return;
    }
    const headers = new Headers();
    for (let index = 0; index < req.rawHeaders.length; index += 2) headers.append(req.rawHeaders[index]!, req.rawHeaders[index + 1]!);
    const response = await endpoint(
      new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) }),
    );
    const body = Buffer.from(await response.arrayBuffer());
    // The charge is committed by now: destroying the socket loses only the answer.
    if (fault?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    response.headers.forEach((value, name) => {
      res.setHeader(name, value);
    });
    res.writeHead(response.status);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1/payments`,
    pool,
    schema,
    seenKeys,
    faults,
    async charges() {
      const { rows } = await pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM "${schema}".charges`);
      return rows[0]!.count;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** Reads the raw key back out of an sf-string field value. */
export const unquote = (field: string) => (field.startsWith('"') ? field.slice(1, -1) : field);
