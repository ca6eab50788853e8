import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frontendMessageCounter, type PgRoundTripProxy, startPgRoundTripProxy } from '../src/servers/pg-round-trip-proxy.js';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
let proxy: PgRoundTripProxy;
let client: pg.Client;

beforeAll(async () => {
  proxy = await startPgRoundTripProxy(databaseUrl);
  client = new pg.Client({ connectionString: proxy.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await proxy?.close();
});

/** A startup packet, then typed messages, as a driver would write them. */
function frontendStream(types: string[]): Buffer {
  const startup = Buffer.alloc(8);
  startup.writeInt32BE(8, 0);
  startup.writeInt32BE(196608, 4);
  const messages = types.map((type, i) => {
    const body = Buffer.from(`payload-${i}`);
    const header = Buffer.alloc(5);
    header.write(type, 0);
    header.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([header, body]);
  });
  return Buffer.concat([startup, ...messages]);
}

describe('PostgreSQL round-trip proxy', () => {
  it('parses the same messages however TCP splits the stream', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('Q', 'P', 'B', 'E', 'S', 'D'), { maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 200 }),
        (types, cuts) => {
          const stream = frontendStream(types);
          const seen: string[] = [];
          const feed = frontendMessageCounter((type) => seen.push(type));
          let offset = 0;
          for (let i = 0; offset < stream.length; i++) {
            const size = cuts[i % cuts.length]!;
            feed(stream.subarray(offset, offset + size));
            offset += size;
          }
          expect(seen).toEqual(types);
        },
      ),
    );
  });

  it('counts a parameterized statement as one round trip and a transaction of three as three', async () => {
    const start = proxy.traffic();
    await client.query('SELECT $1::int AS one', [1]);
    const afterOne = proxy.traffic();
    expect(afterOne.roundTrips - start.roundTrips).toBe(1);
    expect(afterOne.statements - start.statements).toBe(1);
    await client.query('BEGIN');
    const { rows } = await client.query<{ n: number }>('SELECT $1::int AS n', [42]);
    await client.query('COMMIT');
    expect(rows[0]!.n).toBe(42);
    const afterTx = proxy.traffic();
    expect(afterTx.roundTrips - afterOne.roundTrips).toBe(3);
    expect(afterTx.statements - afterOne.statements).toBe(3);
  });

  it('counts a multi-statement simple query as one round trip', async () => {
    const start = proxy.traffic();
    await client.query('SELECT 1; SELECT 2');
    expect(proxy.traffic().roundTrips - start.roundTrips).toBe(1);
  });
});
