import { createIdempotency, isOncelyError } from '@oncely/core';
import * as driver7 from 'mongodb';
import * as driver6 from 'mongodb6';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeScopeId, mongoJournal, mongoOutbox, mongoStore, mongoTransactionalStore } from '../../src/index.js';
import { claimToken } from '../support/scripted-driver.js';
import { connectSeeingSecondary, cursorReply, type Responder, type ScriptedDeployment, scriptedDeployment, type WireCommand } from '../support/scripted-wire.js';

// The real driver, both majors, against scripted servers on real sockets (not MongoDB): what the
// store's options become on the wire once the driver has chosen a member and encoded the command.

const drivers = [
  { name: 'mongodb 7.x', MongoClient: driver7.MongoClient },
  { name: 'mongodb 6.x', MongoClient: driver6.MongoClient as unknown as typeof driver7.MongoClient },
];

const scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key: 'k-1' };
const request = { ...scope, request: { amount: '10.00' } };
const WRITES = new Set(['findAndModify', 'update', 'delete']);

/** Answers like a server that holds no record: every claim is won, every compare-and-set matches. */
function answers(collections: driver7.Document[] = []): Responder {
  return (command) => {
    switch (command.name) {
      case 'listCollections':
        return cursorReply('app.$cmd.listCollections', collections);
      case 'find':
        return cursorReply(`app.${command.body.find}`);
      case 'findAndModify':
        return {
          lastErrorObject: { n: 1, updatedExisting: false },
          value: {
            _id: encodeScopeId(scope),
            fingerprint: 'f',
            state: 'in_progress',
            fence: 1,
            token: claimToken(command.body.update),
            createdAt: new Date(),
            expiresAt: new Date(Date.now() + 86_400_000),
            leaseRemainingMs: 30_000,
          },
          ok: 1,
        };
      case 'update':
      case 'delete':
        return { n: 1, nModified: 1, ok: 1 };
      default:
        return undefined;
    }
  };
}

const named = (commands: WireCommand[], ...names: string[]) => commands.filter((command) => names.includes(command.name));

/** Runs every lease-mode operation once: claim, extend, complete; claim, release; get; purge. */
async function everyLeaseOperation(store: ReturnType<typeof mongoStore>): Promise<void> {
  const engine = createIdempotency({ store });
  await engine.run(request, async (context) => {
    await context.extendLease();
    return { status: 201 };
  });
  await expect(
    engine.run({ ...request, key: 'k-2' }, async () => {
      throw new Error('handler failed');
    }),
  ).rejects.toThrow('handler failed');
  await store.get(scope);
  await store.purgeExpired(10);
}

let deployment: ScriptedDeployment | undefined;
let client: driver7.MongoClient | undefined;
afterEach(async () => {
  await client?.close();
  await deployment?.close();
  client = undefined;
  deployment = undefined;
});

for (const { name, MongoClient } of drivers) {
  describe(`what the store sends, through the real ${name} driver (scripted servers, not MongoDB)`, () => {
    it('on a secondaryPreferred, w=1 client every lease-mode write asks for a majority and every read goes to the primary', async () => {
      deployment = await scriptedDeployment(['primary', 'secondary'], answers());
      client = new MongoClient(deployment.url('readPreference=secondaryPreferred&w=1'));
      await connectSeeingSecondary(client);
      await everyLeaseOperation(mongoStore({ client }));

      const writes = named(deployment.commands, ...WRITES);
      expect(writes.map((command) => command.name).sort()).toEqual(['delete', 'findAndModify', 'findAndModify', 'update', 'update']);
      for (const write of writes) expect(write.body.writeConcern).toEqual({ w: 'majority' });
      const reads = named(deployment.commands, 'find');
      expect(reads).toHaveLength(2);
      for (const read of reads) expect(read.port).toBe(deployment.port('primary'));
      // The client would have read the secondary: the same driver sends its own finds there.
      await client.db().collection('other').findOne({});
      expect(deployment.commands.at(-1)?.port).toBe(deployment.port('secondary'));
    });

    it('the journal reads the primary too, whatever the client prefers', async () => {
      deployment = await scriptedDeployment(['primary', 'secondary'], answers());
      client = new MongoClient(deployment.url('readPreference=secondaryPreferred'));
      await connectSeeingSecondary(client);
      const journal = mongoJournal({ db: client.db() });
      expect(await journal.get('op-1')).toBeUndefined();
      expect(await journal.listUnresolved({ staleAfterMs: 1_000, limit: 5 })).toEqual([]);
      const reads = named(deployment.commands, 'find');
      expect(reads).toHaveLength(2);
      for (const read of reads) expect(read.port).toBe(deployment.port('primary'));
    });

    it("the outbox claim reads an aggregate's counter and next events at the primary, whatever the client prefers", async () => {
      const leased = { _id: '["order","a"]', aggregateType: 'order', aggregateId: 'a', claimableAt: new Date(), order: 1, leaseOwner: 'relay-1' };
      deployment = await scriptedDeployment(['primary', 'secondary'], (command) => {
        if (command.name === 'findAndModify') return { lastErrorObject: { n: 1, updatedExisting: true }, value: leased, ok: 1 };
        if (command.name === 'find') return cursorReply(`app.${command.body.find}`, [{ _id: leased._id, seq: 3 }]);
        if (command.name === 'aggregate') return cursorReply(`app.${command.body.aggregate}`);
        if (command.name === 'update' || command.name === 'delete') return { n: 1, nModified: 1, ok: 1 };
        return undefined;
      });
      client = new MongoClient(deployment.url('readPreference=secondaryPreferred'));
      await connectSeeingSecondary(client);
      // The aggregate is empty: the claim reads its counter and its events, then forgets it.
      expect(await mongoOutbox({ db: client.db() }).source.claim({ owner: 'relay-1', limit: 1, leaseMs: 1_000 })).toEqual([]);
      const reads = named(deployment.commands, 'find', 'aggregate');
      expect(reads.map((read) => [read.name, read.body.find ?? read.body.aggregate])).toEqual([
        ['find', 'oncely_outbox_sequences'],
        ['aggregate', 'oncely_outbox'],
      ]);
      for (const read of reads) expect(read.port).toBe(deployment.port('primary'));
    });

    it('a write concern given to the store is the one every lease-mode write carries', async () => {
      deployment = await scriptedDeployment(['primary', 'secondary'], answers());
      client = new MongoClient(deployment.url('w=majority'));
      await everyLeaseOperation(mongoStore({ client, writeConcern: { w: 1 } }));
      const writes = named(deployment.commands, ...WRITES);
      expect(writes).toHaveLength(5);
      for (const write of writes) expect(write.body.writeConcern).toEqual({ w: 1 });
    });

    it('behind mongos lease mode is refused before anything is written; runInTransaction still commits', async () => {
      deployment = await scriptedDeployment(['mongos'], answers());
      client = new MongoClient(deployment.url());
      const store = mongoStore({ client });
      let executions = 0;
      const refusal = await createIdempotency({ store })
        .run(request, async () => {
          executions++;
          return { status: 201 };
        })
        .catch((error: unknown) => error);
      expect(isOncelyError(refusal, 'capability_missing')).toBe(true);
      expect((refusal as Error).message).toMatch(/mongos router fills in \$\$NOW from its own clock/);
      await expect(store.ensureIndexes()).rejects.toMatchObject({ code: 'capability_missing' });
      expect(executions).toBe(0);
      expect(named(deployment.commands, 'findAndModify', 'update', 'delete', 'createIndexes')).toEqual([]);

      const transactional = await mongoTransactionalStore({ client });
      await expect(transactional.claim({ scope, fingerprint: 'f', token: 't', leaseMs: 1_000, retentionMs: 60_000 })).rejects.toMatchObject({
        code: 'capability_missing',
      });
      await transactional.ensureIndexes();
      const result = await createIdempotency({ store: transactional }).runInTransaction(request, async () => ({ status: 201 }));
      expect(result.kind).toBe('executed');
      const [claim] = named(deployment.commands, 'findAndModify');
      expect(claim?.body).toMatchObject({ startTransaction: true, autocommit: false });
      expect(claim?.body.writeConcern).toBeUndefined();
      expect(named(deployment.commands, 'commitTransaction')[0]?.body.writeConcern).toMatchObject({ w: 'majority' });
    });

    it('a collection with a non-simple default collation is refused before any claim or index', async () => {
      const collation = { locale: 'en', strength: 2 };
      deployment = await scriptedDeployment(['primary'], answers([{ name: 'oncely_idempotency', type: 'collection', options: { collation } }]));
      client = new MongoClient(deployment.url());
      const store = mongoStore({ client });
      const refusal = await store.ensureIndexes().catch((error: unknown) => error);
      expect(isOncelyError(refusal, 'invalid_option')).toBe(true);
      expect((refusal as Error).message).toContain('"locale":"en"');
      await expect(store.claim({ scope, fingerprint: 'f', token: 't', leaseMs: 1_000, retentionMs: 60_000 })).rejects.toMatchObject({
        code: 'invalid_option',
      });
      await expect(mongoTransactionalStore({ client })).rejects.toMatchObject({ code: 'invalid_option' });
      expect(named(deployment.commands, 'findAndModify', 'createIndexes')).toEqual([]);
    });
  });
}
