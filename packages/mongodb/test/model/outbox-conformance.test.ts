import { runOutboxSourceConformance } from '@oncely/testkit';
import type { ClientSession } from 'mongodb';
import { describe, expect, it, vi } from 'vitest';
import { mongoOutbox } from '../../src/index.js';
import { freezeNow } from '../support/mingo.js';
import { mingoDb } from '../support/mingo-db.js';

// The outbox source contract run on the outbox's own code over a mingo-backed Db: mingo is not
// MongoDB, so this proves the claim algorithm and the commands' logic, with calls interleaving only
// between round trips (each command is atomic here). The same suite runs on a real replica set in
// test/real-server/outbox-conformance.test.ts when MONGODB_URL is set.

freezeNow();
const committed = { inTransaction: () => true } as unknown as ClientSession;

runOutboxSourceConformance({ describe, it, expect }, {
  name: 'mongodb outbox over mingo (a model, not MongoDB)',
  // $$NOW is the faked Date: moving it is the server clock passing.
  advanceTime: async (ms) => {
    vi.setSystemTime(new Date(Date.now() + ms));
  },
  createOutbox: async () => {
    const mingo = mingoDb();
    const outbox = mongoOutbox({ db: mingo.db });
    await outbox.ensureIndexes();
    return {
      source: outbox.source,
      enqueue: (event) => outbox.enqueue(committed, event),
      async inspect(eventId) {
        const row = mingo.documents('oncely_outbox').find((document) => document._id === eventId);
        return row
          ? {
              published: row.publishedAt !== null,
              deadLettered: row.deadLetteredAt !== null,
              attempts: row.attempts as number,
              leaseOwner: row.leaseOwner as string | undefined,
            }
          : undefined;
      },
    };
  },
});
