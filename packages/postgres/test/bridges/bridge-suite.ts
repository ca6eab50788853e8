import { createIdempotency, type IdempotencyRequest, isOncelyError } from '@oncely/core';
import { startProcess } from '@oncely/test-support';
import { runStoreConformance, uniqueKey } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresInbox, postgresOutbox, postgresStore } from '../../src/index.js';
import { DATABASE_URL, migratedSchema, rawRecord } from '../support/database.js';
import { type BridgeCase, type OpenedDb, paymentsTable } from './cases/bridge-case.js';

/** What the suite needs besides the case: where the kill test's child finds the same case. */
export interface BridgeSuiteOptions {
  /** The case's module (its default export is the case), for the child process: `new URL('./cases/x.ts', import.meta.url)`. */
  readonly caseModule: URL;
  /** A label for the suite's schema (letters, digits, `_`). */
  readonly label: string;
}

const CHILD = new URL('./fixtures/bridge-child.ts', import.meta.url);

/** A payment request for `key`; `amount` is its body. */
const paymentRequest = (key: string, amount = 10): IdempotencyRequest => ({
  tenant: 'acme',
  principal: 'alice',
  operation: 'payments.create.v1',
  key,
  request: { amount },
});

const scopeOf = (key: string) => ({ tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key });

/**
 * The proof every ORM bridge gives, against the shared PostgreSQL with the real ORM: one execution
 * of 50 concurrent duplicates, rollback on a handler error, mismatch, byte-exact replay, the ORM's
 * own nested transactions, outbox and inbox in the same transaction, joining a transaction the
 * caller opened, and a child process SIGKILLed inside the ORM transaction.
 */
export function bridgeSuite<Db, Tx>(orm: BridgeCase<Db, Tx>, options: BridgeSuiteOptions): void {
  describe(`${orm.name}: transactional idempotency through the ORM's own transaction`, () => {
    const { pool: observer, schema, table } = migratedSchema(options.label, { max: 3 });
    let opened: OpenedDb<Db>;
    beforeAll(async () => {
      await observer.query(paymentsTable(schema));
      opened = await orm.open(DATABASE_URL, 10, schema);
    });
    afterAll(async () => {
      await opened?.close();
    });

    const store = () => postgresStore({ db: opened.db, bridge: orm.bridge, schema });
    const engine = () => createIdempotency({ store: store() });
    const rows = async (key: string) =>
      (await observer.query<{ amount: number }>(`SELECT amount FROM "${schema}".bridge_payments WHERE idem_key = $1 ORDER BY id`, [key])).rows.map(
        (row) => row.amount,
      );
    const record = (key: string) => rawRecord(observer, table, scopeOf(key));
    /** A handler that writes one payment row with the ORM and answers 201 with its id. */
    const pay =
      (key: string, amount = 10) =>
      async ({ tx }: { tx: Tx }) => {
        const id = await orm.insert(tx, schema, { key, amount });
        return { status: 201, body: { id, key, amount } };
      };

    // Every clause of the store contract, lease mode and transactions, through the ORM.
    let tables = 0;
    runStoreConformance(
      { describe, it, expect },
      {
        name: `postgres through ${orm.name}`,
        createStore: async () => {
          const own = `records_${++tables}`;
          await migrate(observer, { schema, tables: { oncely_idempotency: own } });
          return postgresStore({ db: opened.db, bridge: orm.bridge, schema, table: own });
        },
        inspect: (conforming, scope) => rawRecord(observer, conforming.table, scope),
        openTransaction: (_store, body) => orm.bridge.transaction(opened.db, body),
        raceRounds: 5,
      },
    );

    it('50 concurrent duplicates: one business row written through the ORM, every caller the same response', async () => {
      const idempotency = engine();
      const key = uniqueKey('dup');
      let executions = 0;
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          idempotency.runInTransaction(paymentRequest(key), async (context) => {
            executions += 1;
            return pay(key)(context);
          }),
        ),
      );
      expect(executions).toBe(1);
      expect(await rows(key)).toEqual([10]);
      const executed = results.filter((result) => result.kind === 'executed');
      expect(executed).toHaveLength(1);
      const response = executed[0]!.kind === 'executed' ? executed[0]!.response : undefined;
      for (const result of results) {
        expect(result.kind === 'executed' || result.kind === 'replayed').toBe(true);
        expect(result.kind === 'executed' || result.kind === 'replayed' ? result.response : undefined).toEqual(response);
      }
      expect((await record(key))?.state).toBe('succeeded');
    });

    it('a handler error rolls back the ORM transaction: no business row, no record, the same error; the retry executes once', async () => {
      const idempotency = engine();
      const key = uniqueKey('error');
      const failure = new Error('card declined after the insert');
      const thrown = await idempotency
        .runInTransaction(paymentRequest(key), async ({ tx }) => {
          await orm.insert(tx, schema, { key, amount: 10 });
          throw failure;
        })
        .catch((error: unknown) => error);
      expect(thrown).toBe(failure);
      expect(await rows(key)).toEqual([]);
      expect(await record(key)).toBeUndefined();
      expect((await idempotency.runInTransaction(paymentRequest(key), pay(key))).kind).toBe('executed');
      expect(await rows(key)).toEqual([10]);
    });

    it('the same key with another body is a mismatch: the handler never runs, no business row is added', async () => {
      const idempotency = engine();
      const key = uniqueKey('mismatch');
      await idempotency.runInTransaction(paymentRequest(key, 10), pay(key, 10));
      let ran = false;
      const second = await idempotency.runInTransaction(paymentRequest(key, 99), async (context) => {
        ran = true;
        return pay(key, 99)(context);
      });
      expect(second).toEqual({ kind: 'mismatch' });
      expect(ran).toBe(false);
      expect(await rows(key)).toEqual([10]);
    });

    it('a replay answers the saved body byte-exact (key order, Unicode, numbers), without running the handler', async () => {
      const idempotency = engine();
      const key = uniqueKey('replay');
      // Key order jsonb would sort, a float, astral and combining characters, nesting.
      const body = { zeta: 1, alpha: [0.1, -0, 1e21, 'naïve ☃ 𝄞 e\u0301'], nested: { b: null, a: { '': true } } };
      const headers = { 'content-type': 'application/json', 'x-trace': 'a"b\\c' };
      const first = await idempotency.runInTransaction(paymentRequest(key), async ({ tx }) => {
        await orm.insert(tx, schema, { key, amount: 10 });
        return { status: 201, headers, body };
      });
      let ran = false;
      const again = await idempotency.runInTransaction(paymentRequest(key), async () => {
        ran = true;
        return { status: 500 };
      });
      expect(first.kind).toBe('executed');
      expect(again.kind).toBe('replayed');
      expect(ran).toBe(false);
      const replayed = again.kind === 'replayed' ? again.response : undefined;
      expect(JSON.stringify(replayed?.body)).toBe(JSON.stringify(body));
      expect(JSON.stringify(replayed?.headers)).toBe(JSON.stringify(headers));
      expect(await rows(key)).toEqual([10]);
    });

    if (orm.nesting === 'savepoint') {
      it("the ORM's own nested transactions inside the handler keep the claim: a committed savepoint stays, a rolled-back one goes, the outcome is saved", async () => {
        const idempotency = engine();
        const key = uniqueKey('nested');
        const result = await idempotency.runInTransaction(paymentRequest(key), async ({ tx }) => {
          await orm.insert(tx, schema, { key, amount: 1 });
          await orm.nested(tx, async (inner) => {
            await orm.insert(inner, schema, { key, amount: 2 });
          });
          const inner = await orm
            .nested(tx, async (nested) => {
              await orm.insert(nested, schema, { key, amount: 3 });
              throw new Error('rolled back to the savepoint');
            })
            .catch((error: unknown) => error);
          expect((inner as Error).message).toBe('rolled back to the savepoint');
          // The claim is still the transaction's: a write after the savepoint's rollback commits with it.
          await orm.insert(tx, schema, { key, amount: 4 });
          return { status: 201, body: { key } };
        });
        expect(result.kind).toBe('executed');
        expect(await rows(key)).toEqual([1, 2, 4]);
        expect((await record(key))?.state).toBe('succeeded');
        expect((await idempotency.runInTransaction(paymentRequest(key), pay(key))).kind).toBe('replayed');

        // A nested failure the handler lets through rolls back everything, the claim too.
        const failed = uniqueKey('nested-fail');
        const thrown = await idempotency
          .runInTransaction(paymentRequest(failed), async ({ tx }) => {
            await orm.insert(tx, schema, { key: failed, amount: 1 });
            await orm.nested(tx, async (inner) => {
              await orm.insert(inner, schema, { key: failed, amount: 2 });
              throw new Error('nested failure');
            });
            return { status: 201 };
          })
          .catch((error: unknown) => error);
        expect((thrown as Error).message).toBe('nested failure');
        expect(await rows(failed)).toEqual([]);
        expect(await record(failed)).toBeUndefined();
      });
    } else {
      it("the ORM's refusal of a nested transaction inside the handler leaves the claim and the transaction as they were", async () => {
        const idempotency = engine();
        const key = uniqueKey('nested');
        const result = await idempotency.runInTransaction(paymentRequest(key), async ({ tx }) => {
          await orm.insert(tx, schema, { key, amount: 1 });
          const refused = await orm.nested(tx, async () => undefined).then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(refused).toBeInstanceOf(Error);
          await orm.insert(tx, schema, { key, amount: 2 });
          return { status: 201, body: { key } };
        });
        expect(result.kind).toBe('executed');
        expect(await rows(key)).toEqual([1, 2]);
        expect((await record(key))?.state).toBe('succeeded');
        // Let through, the refusal is a handler error: everything rolls back, the claim too.
        const failed = uniqueKey('nested-fail');
        await expect(
          idempotency.runInTransaction(paymentRequest(failed), async ({ tx }) => {
            await orm.insert(tx, schema, { key: failed, amount: 1 });
            await orm.nested(tx, async () => undefined);
            return { status: 201 };
          }),
        ).rejects.toBeInstanceOf(Error);
        expect([await rows(failed), await record(failed)]).toEqual([[], undefined]);
      });
    }

    it('outbox enqueue and inbox process take the ORM transaction: business row, outbox row, inbox row and saved response commit together, or roll back together', async () => {
      const idempotency = engine();
      const outbox = postgresOutbox({ db: opened.db, bridge: orm.bridge, schema });
      const inbox = postgresInbox({ db: opened.db, bridge: orm.bridge, schema });
      const outboxRows = async (key: string) =>
        (await observer.query(`SELECT 1 FROM "${schema}".oncely_outbox WHERE aggregate_id = $1`, [key])).rowCount;
      const inboxRows = async (key: string) =>
        (await observer.query(`SELECT 1 FROM "${schema}".oncely_inbox WHERE consumer = 'bridge-suite' AND event_id = $1`, [key])).rowCount;
      const handler = (key: string, fail: boolean) => async ({ tx }: { tx: Tx }) => {
        await orm.insert(tx, schema, { key, amount: 10 });
        const event = await outbox.enqueue(tx, { aggregateType: 'payment', aggregateId: key, eventType: 'payment.created', payload: { key } });
        expect(event.aggregateSeq).toBe(1);
        const outcome = await inbox.process(tx, { consumer: 'bridge-suite', eventId: key }, async (inner) => {
          await orm.insert(inner, schema, { key, amount: 20 });
        });
        expect(outcome).toBe('processed');
        if (fail) throw new Error('after the outbox and the inbox');
        return { status: 201, body: { key } };
      };

      const committed = uniqueKey('outbox');
      expect((await idempotency.runInTransaction(paymentRequest(committed), handler(committed, false))).kind).toBe('executed');
      expect([await rows(committed), await outboxRows(committed), await inboxRows(committed)]).toEqual([[10, 20], 1, 1]);
      expect((await record(committed))?.state).toBe('succeeded');

      const rolledBack = uniqueKey('outbox-fail');
      await expect(idempotency.runInTransaction(paymentRequest(rolledBack), handler(rolledBack, true))).rejects.toThrow('after the outbox and the inbox');
      expect([await rows(rolledBack), await outboxRows(rolledBack), await inboxRows(rolledBack), await record(rolledBack)]).toEqual([[], 0, 0, undefined]);

      // inbox.run opens the ORM's transaction itself: the second delivery is a duplicate, and applies nothing.
      const eventId = uniqueKey('delivery');
      const apply = (tx: Tx) => orm.insert(tx, schema, { key: eventId, amount: 5 });
      expect(await inbox.run({ consumer: 'bridge-suite', eventId }, apply)).toBe('processed');
      expect(await inbox.run({ consumer: 'bridge-suite', eventId }, apply)).toBe('duplicate');
      expect(await rows(eventId)).toEqual([5]);
      // The relay's side runs through the bridge too.
      expect((await outbox.source.stats()).unpublished).toBeGreaterThanOrEqual(1);
    });

    it('lease mode, get and purge go through the bridge on the database object', async () => {
      const idempotency = engine();
      const key = uniqueKey('lease');
      const first = await idempotency.run(paymentRequest(key), async () => ({ status: 201, body: { key } }));
      const again = await idempotency.run(paymentRequest(key), async () => ({ status: 500 }));
      expect([first.kind, again.kind]).toEqual(['executed', 'replayed']);
      expect((await idempotency.get(scopeOf(key)))?.state).toBe('succeeded');
      expect(await idempotency.purgeExpired(10)).toBeGreaterThanOrEqual(0);
    });

    describe('joining a transaction the application opened (runInTransaction(…, { tx }))', () => {
      it("claim, handler and saved response in the caller's ORM transaction: its commit keeps them with its own writes; a replay joins and writes nothing", async () => {
        const idempotency = engine();
        const key = uniqueKey('join');
        const result = await orm.bridge.transaction(opened.db, async (tx) => {
          await orm.insert(tx, schema, { key, amount: 1 });
          const joined = await idempotency.runInTransaction(paymentRequest(key), pay(key, 10), { tx });
          // Nothing is visible outside until the caller commits.
          expect(await record(key)).toBeUndefined();
          return joined;
        });
        expect(result.kind).toBe('executed');
        expect(await rows(key)).toEqual([1, 10]);
        expect((await record(key))?.state).toBe('succeeded');
        const replay = await orm.bridge.transaction(opened.db, (tx) => idempotency.runInTransaction(paymentRequest(key), pay(key, 10), { tx }));
        expect(replay.kind).toBe('replayed');
        expect(await rows(key)).toEqual([1, 10]);
      });

      it("a handler error or a released outcome undoes only oncely's part: the caller's transaction stays usable and commits its own writes", async () => {
        const idempotency = engine();
        const key = uniqueKey('join-error');
        await orm.bridge.transaction(opened.db, async (tx) => {
          await orm.insert(tx, schema, { key, amount: 1 });
          const thrown = await idempotency
            .runInTransaction(paymentRequest(key), async (context) => {
              await pay(key, 10)(context);
              throw new Error('handler failed');
            }, { tx })
            .catch((error: unknown) => error);
          expect((thrown as Error).message).toBe('handler failed');
          const released = await idempotency.runInTransaction(
            paymentRequest(key),
            async ({ tx: inner }) => {
              await orm.insert(inner, schema, { key, amount: 20 });
              return { status: 503 };
            },
            { tx },
          );
          expect(released).toMatchObject({ kind: 'executed', state: 'released' });
          await orm.insert(tx, schema, { key, amount: 2 });
        });
        expect(await rows(key)).toEqual([1, 2]);
        expect(await record(key)).toBeUndefined();
      });

      it("the caller's rollback takes the record with it: the retry executes", async () => {
        const idempotency = engine();
        const key = uniqueKey('join-rollback');
        const abort = new Error('caller rolls back');
        await expect(
          orm.bridge.transaction(opened.db, async (tx) => {
            expect((await idempotency.runInTransaction(paymentRequest(key), pay(key), { tx })).kind).toBe('executed');
            throw abort;
          }),
        ).rejects.toBe(abort);
        expect([await rows(key), await record(key)]).toEqual([[], undefined]);
        expect((await idempotency.runInTransaction(paymentRequest(key), pay(key))).kind).toBe('executed');
        expect(await rows(key)).toEqual([10]);
      });

      it('10 concurrent joins of one key, each in its own caller transaction: one executes, the others replay after its commit', async () => {
        const idempotency = engine();
        const key = uniqueKey('join-race');
        let executions = 0;
        const results = await Promise.all(
          Array.from({ length: 10 }, () =>
            orm.bridge.transaction(opened.db, (tx) =>
              idempotency.runInTransaction(
                paymentRequest(key),
                async (context) => {
                  executions += 1;
                  return pay(key)(context);
                },
                { tx },
              ),
            ),
          ),
        );
        expect(executions).toBe(1);
        expect(results.map((result) => result.kind).sort()).toEqual(['executed', ...Array.from({ length: 9 }, () => 'replayed')]);
        expect(await rows(key)).toEqual([10]);
      });

      it('a join given no transaction is refused before anything is written', async () => {
        const idempotency = engine();
        const key = uniqueKey('join-bad');
        for (const tx of [null, undefined, 42]) {
          const thrown = await idempotency.runInTransaction(paymentRequest(key), pay(key), { tx: tx as unknown as Tx }).catch((error: unknown) => error);
          expect(isOncelyError(thrown) && thrown.code).toBe('invalid_option');
        }
        expect([await rows(key), await record(key)]).toEqual([[], undefined]);
      });
    });

    it('a child process SIGKILLed inside the ORM transaction before commit leaves no record and no row; the retry executes once', async () => {
      const key = uniqueKey('kill');
      const child = startProcess(CHILD, { databaseUrl: DATABASE_URL, schema, caseModule: options.caseModule.href, key, amount: 10 }, ['--import', 'tsx']);
      const written = (await child.point('business-written')) as { pid?: number };
      expect(typeof written.pid).toBe('number');
      // The row and the claim are written but not committed: nobody else sees them.
      expect([await rows(key), await record(key)]).toEqual([[], undefined]);
      await child.kill();
      expect(await child.exited).toBe('SIGKILL');
      const idempotency = engine();
      const retry = await idempotency.runInTransaction(paymentRequest(key), pay(key));
      expect(retry.kind).toBe('executed');
      expect(await rows(key)).toEqual([10]);
      expect((await idempotency.runInTransaction(paymentRequest(key), pay(key))).kind).toBe('replayed');
      expect(await rows(key)).toEqual([10]);
    });
  });
}
