import { CompiledQuery, type DatabaseConnection, type Kysely, PostgresAdapter, type QueryResult, type Transaction } from 'kysely';
import type { PgClientLike, PgPoolClientLike, PgPoolLike, PgQueryConfigLike, PgQueryResultLike } from '../driver/postgres-db.js';
import { HeldRouteDeclined } from './transaction-bridge.js';
import { heldPool } from './held-pool.js';
import { deferred } from './deferred.js';

/**
 * Where a held connection stands for Kysely's own transaction statements: `opening` answers its
 * `begin`, `closing` its `commit` / `rollback`, locally (oncely's claim opened the transaction, its
 * save + COMMIT or its ROLLBACK ends it); in `idle` and `open` every statement goes out.
 */
type HeldState = 'idle' | 'opening' | 'open' | 'closing';

/** One connection of Kysely's pool, held by oncely: `db` is Kysely on that connection alone (`db.connection()`). */
interface Held {
  readonly db: Kysely<unknown>;
  readonly connection: DatabaseConnection;
  /** The connection's `executeQuery` before oncely's answers were put in front of it. */
  readonly send: DatabaseConnection['executeQuery'];
  state: HeldState;
  /** Kysely opened with something else than `begin`: refused, and the transaction is not handed out. */
  refused?: Error;
  /** The connection's state is unknown: Kysely's closing statement fails, so Kysely discards the connection. */
  broken?: Error;
  /** Ends the `db.connection()` scope: Kysely releases the connection to its pool. */
  readonly release: () => void;
  /** Resolves (commit) or rejects (rollback) the transaction's callback; Kysely then ends it, answered locally. */
  finish?: (committing: boolean) => void;
  done?: Promise<unknown>;
}

/** The oncely-side client of each Kysely connection, one per connection (oncely's PREPAREs are tracked per client object). */
const wrappers = new WeakMap<DatabaseConnection, PgPoolClientLike>();
/** The hold each client currently stands for. */
const helds = new WeakMap<object, Held>();
const transactions = new WeakMap<object, Held>();

/** What oncely hands Kysely's callback to make it roll back; never seen outside. */
const ROLLED_BACK = new Error('oncely/postgres: the transaction ends without committing');

/** Kysely's pg connection class (its PostgresDialect's driver makes one per pg client). */
const isPgConnection = (connection: DatabaseConnection) => connection.constructor?.name === 'PostgresConnection';

/** A statement for Kysely's pg connection to hand its pg client as it is: a pg submittable, a named config or text. */
const compiled = (sql: unknown, parameters: readonly unknown[]): CompiledQuery =>
  ({ ...CompiledQuery.raw('', [...parameters]), sql }) as unknown as CompiledQuery;

/** Kysely's own transaction statement, answered here while it stands for what oncely sent. */
function answer(held: Held, sql: unknown): Promise<QueryResult<unknown>> | undefined {
  if (held.state === 'opening') {
    held.state = 'open';
    // Kysely's PostgresDriver opens with exactly this; anything else (an isolation level, an access mode) would be sent out of order.
    if (sql !== 'begin') held.refused = new Error(`oncely/postgres: kyselyBridge expected Kysely to open its transaction with begin, not ${String(sql)}`);
    return held.refused ? Promise.reject(held.refused) : Promise.resolve({ rows: [] });
  }
  if (held.state === 'closing' && (sql === 'commit' || sql === 'rollback')) {
    return held.broken ? Promise.reject(held.broken) : Promise.resolve({ rows: [] });
  }
  return undefined;
}

/** Holds one connection of `db`'s pool: Kysely acquires it for `db.connection()`, and releases it when oncely does. */
async function hold(db: Kysely<unknown>): Promise<Held> {
  const released = deferred<void>();
  const handed = deferred<Held>();
  const scope = db.connection().execute(async (single) => {
    const connection = await single.getExecutor().provideConnection(async (inner) => inner);
    const own = Object.getOwnPropertyDescriptor(connection, 'executeQuery');
    const send = connection.executeQuery;
    const held: Held = { db: single, connection, send, state: 'idle', release: () => released.resolve() };
    if (isPgConnection(connection)) {
      // Kysely's logging replaces executeQuery on the object the same way; what was there is put back on release.
      connection.executeQuery = ((query: CompiledQuery) => answer(held, query.sql) ?? send.call(connection, query)) as typeof send;
    }
    handed.resolve(held);
    try {
      await released.promise;
    } finally {
      if (own) Object.defineProperty(connection, 'executeQuery', own);
      else delete (connection as Partial<DatabaseConnection>).executeQuery;
    }
  });
  const held = await Promise.race([
    handed.promise,
    scope.then(() => {
      throw new Error('oncely/postgres: the Kysely connection was released before oncely held it');
    }),
  ]);
  void scope.catch(() => undefined);
  return held;
}

/** Marks the connection for Kysely to discard: a transaction whose rollback fails is one Kysely's pg driver never reuses. */
async function discard(held: Held, error: unknown): Promise<void> {
  held.state = 'opening';
  await held.db
    .transaction()
    .execute(async () => {
      held.state = 'closing';
      held.broken = error instanceof Error ? error : new Error(String(error));
      throw held.broken;
    })
    .catch(() => undefined);
}

/** The oncely-side client of a held connection: oncely's messages go to Kysely's pg connection, which hands them to its pg client. */
function client(current: Held): PgPoolClientLike {
  const known = wrappers.get(current.connection);
  if (known) {
    helds.set(known, current);
    return known;
  }
  const held = () => helds.get(wrapper)!;
  const send = (sql: unknown, parameters: readonly unknown[]) => held().send.call(held().connection, compiled(sql, parameters));
  const wrapper: PgPoolClientLike = {
    query(textOrConfig: string | PgQueryConfigLike | { submit?: unknown; handleError?(error: unknown): void }, values?: unknown[]) {
      if (typeof textOrConfig === 'object' && typeof (textOrConfig as { submit?: unknown }).submit === 'function') {
        // oncely's scripts (pg submittables) report through themselves; a connection Kysely refuses fails them.
        const script = textOrConfig as { handleError(error: unknown): void };
        void send(script, []).catch((error: unknown) => script.handleError(error));
        return Promise.resolve({ rows: [] });
      }
      const parameters = values ?? (textOrConfig as PgQueryConfigLike).values ?? [];
      return send(textOrConfig, parameters).then(
        (result): PgQueryResultLike => ({ rows: result.rows as unknown[], rowCount: result.numAffectedRows === undefined ? result.rows.length : Number(result.numAffectedRows) }),
      );
    },
    release(error) {
      const ending = held();
      ending.state = 'idle';
      const released = error ? discard(ending, error) : Promise.resolve();
      void released.finally(ending.release);
    },
  };
  wrappers.set(current.connection, wrapper);
  helds.set(wrapper, current);
  return wrapper;
}

/**
 * Kysely's pg pool as one oncely checks connections out of, or undefined when `db` is not a Kysely
 * on PostgreSQL (then the bridge keeps `db.transaction().execute`). A connection that turns out not
 * to be Kysely's PostgresDialect on `pg` (another dialect on PostgreSQL) is given back unused and the
 * store keeps Kysely's own transaction ({@link HeldRouteDeclined}).
 */
export function kyselyPgPool<DB>(db: Kysely<DB>): PgPoolLike | undefined {
  const shape = db as Partial<Kysely<DB>> | undefined;
  if (typeof shape?.connection !== 'function' || typeof shape.getExecutor !== 'function' || shape.isTransaction !== false) return undefined;
  if (!(shape.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const connect = async () => {
    const held = await hold(db as unknown as Kysely<unknown>);
    if (isPgConnection(held.connection)) return client(held);
    held.release();
    throw new HeldRouteDeclined('oncely/postgres: this Kysely is not on its PostgresDialect over pg');
  };
  return heldPool(connect);
}

/** Kysely's own `Transaction` over the connection `connection` stands for, inside the transaction oncely's claim + BEGIN opened. */
export async function heldKyselyTransaction<DB>(_db: Kysely<DB>, connection: PgClientLike): Promise<Transaction<DB>> {
  const held = helds.get(connection);
  if (held === undefined) throw new Error('oncely/postgres: kyselyBridge was handed a connection that is not one of its pool');
  const finished = deferred<void>();
  const finish = (committing: boolean) => (committing ? finished.resolve() : finished.reject(ROLLED_BACK));
  const handed = deferred<Transaction<unknown>>();
  held.state = 'opening';
  held.refused = undefined;
  held.broken = undefined;
  // Kysely's transaction on the one connection `held.db` has: it neither acquires nor releases it.
  const done = held.db.transaction().execute((trx) => {
    handed.resolve(trx);
    return finished.promise;
  });
  Object.assign(held, { finish, done: done.catch(() => undefined) });
  const trx = await Promise.race([
    handed.promise,
    done.then(() => {
      throw new Error('oncely/postgres: the Kysely transaction ended before it began');
    }),
  ]);
  transactions.set(trx, held);
  return trx as unknown as Transaction<DB>;
}

/** The handler is done: Kysely ends its transaction (answered locally, nothing sent), so the `trx` refuses further queries. */
export async function endHeldKyselyTransaction<DB>(trx: Transaction<DB>, committing: boolean): Promise<void> {
  const held = transactions.get(trx);
  if (held === undefined) return;
  transactions.delete(trx);
  held.state = 'closing';
  held.finish?.(committing);
  await held.done;
  held.state = 'idle';
}
