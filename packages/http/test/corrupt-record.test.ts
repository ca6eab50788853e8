import { createIdempotency, type IdempotencyStore, memoryStore } from '@oncely/core';
import { corruptRecord, toStorageError } from '@oncely/core/adapter';
import { describe, expect, it } from 'vitest';
import { withIdempotency } from '../src/index.js';
import { serveFetch } from './support/fetch-bridge.js';
import { postJson } from './support/send.js';

/** A memory store whose claim reads a record it did not write, as an adapter reports it: corrupt_record. */
function storeWithCorruptRecord(): IdempotencyStore {
  const store = memoryStore();
  return {
    ...store,
    name: 'memory',
    claim: async () => {
      throw toStorageError('memory', 'claim', corruptRecord('the record has the unknown state "done"'));
    },
  };
}

describe('a corrupt record fails closed like any storage failure', () => {
  it('answers 503 problem+json with Retry-After and never runs the handler', async () => {
    let runs = 0;
    const engine = createIdempotency({ store: storeWithCorruptRecord() });
    const server = await serveFetch(
      withIdempotency(
        async () => {
          runs += 1;
          return new Response('charged', { status: 201 });
        },
        { engine, operation: 'payments.create.v1', scope: () => ({ tenant: 'acme' }) },
      ),
    );
    try {
      const response = await postJson(server.url, '/payments', { amount: 10 }, 'key-1');
      expect(response.status).toBe(503);
      expect(response.headers['content-type']).toContain('application/problem+json');
      expect(response.headers['retry-after']).toBeDefined();
      expect((response.json() as { type: string }).type).toBe('https://oncely.dev/problems/storage-unavailable');
      expect(runs).toBe(0);
    } finally {
      await server.close();
    }
  });
});
