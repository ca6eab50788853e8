import type { Knex } from 'knex';
import type { PgClientLike, PgPoolClientLike, PgPoolLike, PgQueryResultLike } from '../driver/postgres-db.js';
import { heldPool } from './held-pool.js';
import { deferred } from './deferred.js';

/** A raw `pg` connection as Knex's pg client holds it (a `pg.Client` from its pool). */
interface RawConnection extends PgClientLike {
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
  /** Knex's own mark of a connection to destroy, read when the pool validates it. */
  __knex__disposed?: unknown;
}

/** What oncely uses of Knex's client (3.x): its dialect, and the pool's acquire and release. */
interface KnexPgClient {
  readonly dialect?: string;
  readonly driverName?: string;
  acquireConnection?(): Promise<RawConnection>;
  releaseConnection?(connection: RawConnection): Promise<unknown>;
}

/** The oncely-side client of each Knex connection, one per connection (oncely's PREPAREs are tracked per client object). */
const wrappers = new WeakMap<RawConnection, PgPoolClientLike>();
const raws = new WeakMap<object, RawConnection>();

function pooled(client: Required<Pick<KnexPgClient, 'releaseConnection'>>, raw: RawConnection): PgPoolClientLike {
  let wrapper = wrappers.get(raw);
  if (!wrapper) {
    wrapper = {
      query: (textOrConfig, values) => raw.query(textOrConfig, values),
      release(error) {
        // A connection oncely saw break (or whose COMMIT's answer was lost) is destroyed, not reused.
        if (error) raw.__knex__disposed = error;
        void client.releaseConnection(raw);
      },
      on: (event, listener) => raw.on(event, listener),
      removeListener: (event, listener) => raw.removeListener(event, listener),
    };
    wrappers.set(raw, wrapper);
    raws.set(wrapper, raw);
  }
  return wrapper;
}

/**
 * Knex's pool (the `pg` client) as a `pg.Pool` oncely can check connections out of, or undefined
 * when `db` is not Knex 3 on `pg`: then the bridge keeps Knex's own `knex.transaction`.
 */
export function knexPgPool(db: Knex): PgPoolLike | undefined {
  const client = (db as unknown as { client?: KnexPgClient }).client;
  if (client?.dialect !== 'postgresql' || client.driverName !== 'pg') return undefined;
  const { acquireConnection, releaseConnection } = client;
  if (typeof acquireConnection !== 'function' || typeof releaseConnection !== 'function') return undefined;
  const knexClient = { acquireConnection: acquireConnection.bind(client), releaseConnection: releaseConnection.bind(client) };
  return heldPool(async () => pooled(knexClient, await knexClient.acquireConnection()));
}

/** Where a held Knex transaction stands: what its connection answers itself (the `BEGIN;` it opens with, the `COMMIT;` or `ROLLBACK` it ends with). */
type HeldState = 'opening' | 'open' | 'closing';

interface Held {
  state: HeldState;
  /** Knex opened with something else than `BEGIN;`: refused, and the transaction is not handed out. */
  refused?: Error;
  /** Resolves the transaction's callback: Knex then ends it (on the held connection, answered locally). */
  finish(): void;
  readonly done: Promise<unknown>;
}

const heldTransactions = new WeakMap<Knex.Transaction, Held>();

const answered = (command: string): PgQueryResultLike => ({ command, rows: [], rowCount: null, fields: [] }) as unknown as PgQueryResultLike;

/**
 * The connection as Knex sees it inside a transaction oncely opened: its `BEGIN;` and its final
 * `COMMIT;` / `ROLLBACK` are answered here and never sent (oncely's claim opened the transaction,
 * its save + COMMIT or its ROLLBACK ends it); every other statement, savepoints included, goes out.
 */
function heldConnection(raw: RawConnection, held: Held): RawConnection {
  const query = (config: string | { text?: string }, second?: unknown, third?: unknown) => {
    const text = typeof config === 'string' ? config : config?.text;
    const callback = [second, third].find((arg): arg is (error: Error | null, result?: PgQueryResultLike) => void => typeof arg === 'function');
    let local: PgQueryResultLike | Error | undefined;
    if (held.state === 'opening') {
      held.state = 'open';
      // Knex 3 opens a transaction with exactly this; anything else (an isolation level) would be sent out of order.
      if (text !== 'BEGIN;') held.refused = new Error(`oncely/postgres: knexBridge expected Knex to open its transaction with BEGIN;, not ${text}`);
      local = held.refused ?? answered('BEGIN');
    } else if (held.state === 'closing' && (text === 'COMMIT;' || text === 'ROLLBACK')) {
      local = answered(text.replace(';', ''));
    }
    if (local === undefined) return (raw.query as (...args: unknown[]) => unknown)(config, second, third);
    const result = local;
    if (callback) {
      queueMicrotask(() => (result instanceof Error ? callback(result) : callback(null, result)));
      return undefined;
    }
    return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
  };
  return new Proxy(raw, {
    get: (target, property) => {
      if (property === 'query') return query;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set: (target, property, value) => Reflect.set(target, property, value, target),
  });
}

/** Knex's own transaction object over the connection `client` stands for, inside the transaction oncely's claim + BEGIN opened. */
export async function heldKnexTransaction(db: Knex, client: PgClientLike): Promise<Knex.Transaction> {
  const raw = raws.get(client);
  if (raw === undefined) throw new Error('oncely/postgres: knexBridge was handed a connection that is not one of its pool');
  const finished = deferred<void>();
  const handed = deferred<Knex.Transaction>();
  const held: Held = { state: 'opening', finish: () => finished.resolve(), done: Promise.resolve() };
  // Knex's transaction on a connection it was given: it neither acquires nor releases it.
  const done = db.transaction(
    (trx) => {
      handed.resolve(trx);
      return finished.promise;
    },
    { connection: heldConnection(raw, held) } as Knex.TransactionConfig,
  );
  Object.assign(held, { done: Promise.resolve(done).catch(() => undefined) });
  const trx = await Promise.race([
    handed.promise,
    Promise.resolve(done).then(() => {
      throw new Error('oncely/postgres: the Knex transaction ended before it began');
    }),
  ]);
  // Knex still hands out a transaction whose BEGIN failed (it only rejects its promise): not to the handler.
  if (held.refused !== undefined) {
    held.state = 'closing';
    held.finish();
    throw held.refused;
  }
  heldTransactions.set(trx, held);
  return trx;
}

/** The handler is done: Knex ends its transaction (answered locally, nothing sent), so the `trx` refuses further queries. */
export async function endHeldKnexTransaction(trx: Knex.Transaction): Promise<void> {
  const held = heldTransactions.get(trx);
  if (held === undefined) return;
  heldTransactions.delete(trx);
  held.state = 'closing';
  held.finish();
  await held.done;
}
