import { createServer, type Server } from 'node:net';
import { createIdempotency, isStorageError, type StorageError } from '@oncely/core';
import * as driver7 from 'mongodb';
import * as driver6 from 'mongodb6';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectDeployment, mongoStore, mongoTransactionalStore } from '../../src/index.js';

// The real driver against a local socket that hangs up on every connection: the failure path a user
// sees when MongoDB is down, with no stand-in anywhere.
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  url = `mongodb://127.0.0.1:${address.port}/app?directConnection=true&serverSelectionTimeoutMS=400&connectTimeoutMS=400`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const drivers = [
  { name: 'mongodb 7.x', MongoClient: driver7.MongoClient },
  { name: 'mongodb 6.x', MongoClient: driver6.MongoClient as unknown as typeof driver7.MongoClient },
];

for (const { name, MongoClient } of drivers) {
  describe(`a MongoDB that hangs up (real ${name} driver)`, () => {
    it('claim fails closed with a StorageError carrying the driver error, and the handler never runs', async () => {
      const client = new MongoClient(url);
      try {
        const engine = createIdempotency({ store: mongoStore({ client }) });
        let executions = 0;
        let failure: unknown;
        try {
          await engine.run({ tenant: 'acme', operation: 'payments.create.v1', key: 'k-1', request: {} }, async () => {
            executions++;
            return { status: 201 };
          });
        } catch (error) {
          failure = error;
        }
        expect(isStorageError(failure)).toBe(true);
        expect((failure as StorageError).operation).toBe('claim');
        expect(((failure as StorageError).cause as Error).name).toBe('MongoServerSelectionError');
        expect(executions).toBe(0);
      } finally {
        await client.close();
      }
    });

    it('topology detection fails with a StorageError, never with a guess', async () => {
      const client = new MongoClient(url);
      try {
        await expect(detectDeployment(client)).rejects.toMatchObject({ code: 'storage_error', operation: 'detectDeployment' });
        await expect(mongoTransactionalStore({ client })).rejects.toMatchObject({ code: 'storage_error' });
      } finally {
        await client.close();
      }
    });
  });
}
