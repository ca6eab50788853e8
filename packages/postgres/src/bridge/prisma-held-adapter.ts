import { OncelyError } from '@oncely/core';
import type { PgClientLike, PgPoolLike } from '../driver/postgres-db.js';
import { setIsolation } from '../sql/isolation.js';
import { deferred } from './deferred.js';

/** What oncely calls on `@prisma/adapter-pg`'s adapter (7.x): `startTransaction` checks a connection out of `this.client`. */
interface PrismaPgAdapterLike {
  startTransaction(isolationLevel?: string): Promise<unknown>;
  underlyingDriver?(): unknown;
}

/** A Prisma driver adapter factory, as `new PrismaClient({ adapter })` takes it (`new PrismaPg(pool)`). */
export interface PrismaAdapterFactoryLike {
  readonly provider: string;
  readonly adapterName: string;
  connect(): Promise<unknown>;
}

/** One transaction oncely opened on `client`, waiting for Prisma's `startTransaction` to take it. */
interface Handoff {
  readonly client: PgClientLike;
  /** What oncely's claim message set, so a level Prisma would set must be the same one. */
  readonly isolation: string | null;
  taken: boolean;
  /** `opening` until the adapter's BEGIN (answered here), `open`, `ended` once Prisma let go of the connection. */
  state: 'opening' | 'open' | 'ended';
  /** oncely is ending Prisma's transaction: its COMMIT or ROLLBACK is answered here, oncely sends its own. */
  closing: boolean;
  /** Why the adapter's opening was refused (the driver error Prisma reports loses the message). */
  refused?: Error;
}

/** Carries the handoff from `$transaction(…)` to the adapter's `startTransaction`, whatever runs in between. */
interface HandoffStorage {
  run<T>(hand: Handoff, fn: () => T): T;
  getStore(): Handoff | undefined;
}

const held = Symbol('oncely.prismaHeld');

/** A factory made by {@link oncelyAdapter}: Prisma's own, with the pool oncely holds connections of. */
export type OncelyPrismaAdapter<F extends PrismaAdapterFactoryLike = PrismaAdapterFactoryLike> = F & {
  readonly [held]: { readonly pool: PgPoolLike; storage?: HandoffStorage };
};

const done = (command: string) => Promise.resolve({ command, rows: [], rowCount: null, fields: [] });
const textOf = (query: unknown) => (typeof query === 'string' ? query : String((query as { text?: unknown }).text));

/**
 * The connection the adapter's `startTransaction` checks out, over the one oncely holds: the
 * adapter's opening `BEGIN` (and a `SET TRANSACTION` at oncely's level) is answered here, since
 * oncely's claim opened the transaction; Prisma's closing `COMMIT` or `ROLLBACK` too, once oncely
 * ends it; every other statement goes to the connection as Prisma sends it (savepoints included).
 */
function handedConnection(hand: Handoff) {
  const refuse = (error: Error) => {
    hand.refused ??= error;
    return Promise.reject(error);
  };
  const client = hand.client as PgClientLike & { on?(...args: unknown[]): unknown; removeListener?(...args: unknown[]): unknown };
  return {
    query(query: unknown, ...rest: unknown[]) {
      const text = textOf(query).trim();
      if (hand.state === 'ended') return refuse(new OncelyError('invalid_state', 'oncely/postgres: this Prisma transaction has ended; use tx only while the handler runs'));
      if (hand.state === 'opening') {
        // oncely's claim message opened the transaction: anything but a plain BEGIN would be a transaction it did not open.
        if (text !== 'BEGIN') return refuse(new OncelyError('invalid_state', `oncely/postgres: @prisma/adapter-pg opened its transaction with ${JSON.stringify(text.slice(0, 60))}, not BEGIN`));
        hand.state = 'open';
        return done('BEGIN');
      }
      const level = /^SET TRANSACTION ISOLATION LEVEL (.+)$/i.exec(text)?.[1];
      if (level !== undefined) {
        if (setIsolation(level) === hand.isolation) return done('SET');
        return refuse(new OncelyError('invalid_option', `oncely/postgres: Prisma asked for isolation level ${level}; give it to prismaBridge({ isolationLevel }) so oncely's claim opens the transaction at it`));
      }
      if (hand.closing && (text === 'COMMIT' || text === 'ROLLBACK')) {
        hand.state = 'ended';
        return done(text);
      }
      return (client.query as (...args: unknown[]) => Promise<unknown>)(query, ...rest);
    },
    on: (...args: unknown[]) => client.on?.(...args),
    removeListener: (...args: unknown[]) => client.removeListener?.(...args),
    // The connection is the store's: it goes back to the pool after oncely's COMMIT.
    release() {
      hand.state = 'ended';
    },
  };
}

/**
 * Wraps a `@prisma/adapter-pg` factory built on `pool` (`new PrismaPg(pool, options)`), for
 * `new PrismaClient({ adapter: oncelyAdapter(new PrismaPg(pool), pool) })`, so that the
 * transactions `prismaBridge` opens on that client run on the connection oncely's claim opened them on:
 * the claim travels with `BEGIN` and the saved response with `COMMIT`, as on raw `pg`. Every other
 * use of the client (its own `$transaction`s included) goes to Prisma's adapter unchanged.
 */
export function oncelyAdapter<F extends PrismaAdapterFactoryLike>(factory: F, pool: PgPoolLike): OncelyPrismaAdapter<F> {
  const state: { pool: PgPoolLike; storage?: HandoffStorage } = { pool };
  const wrapped = Object.create(factory, {
    [held]: { value: state },
    connect: {
      async value() {
        const adapter = (await factory.connect()) as PrismaPgAdapterLike;
        // The handler's statements must reach the connection oncely holds, which comes from this pool.
        if (typeof adapter.startTransaction !== 'function' || adapter.underlyingDriver?.() !== pool) {
          throw new OncelyError('invalid_option', 'oncely/postgres: oncelyAdapter needs a @prisma/adapter-pg PrismaPg built on the pg.Pool given with it');
        }
        return Object.create(adapter, {
          startTransaction: {
            value(isolationLevel?: string) {
              const hand = state.storage?.getStore();
              if (hand === undefined || hand.taken) return adapter.startTransaction(isolationLevel);
              hand.taken = true;
              // The adapter's own startTransaction, checking out the handed connection instead of one of the pool's.
              const handed = handedConnection(hand);
              return adapter.startTransaction.call(Object.create(adapter, { client: { value: { connect: async () => handed } } }), isolationLevel);
            },
          },
        });
      },
    },
  });
  return wrapped as OncelyPrismaAdapter<F>;
}

/** The pool of an {@link oncelyAdapter} factory. */
export const heldPool = (adapter: OncelyPrismaAdapter) => adapter[held].pool;

/**
 * The {@link oncelyAdapter} factory a generated client was built with (Prisma 7 keeps the factory it
 * was given as `_engineConfig.adapter`), or undefined: another adapter, or a Prisma that keeps it
 * elsewhere, and the bridge keeps Prisma's own `$transaction`.
 */
export function heldAdapterOf(client: unknown): OncelyPrismaAdapter | undefined {
  const adapter = (client as { _engineConfig?: { adapter?: Partial<OncelyPrismaAdapter> } } | null)?._engineConfig?.adapter;
  return adapter?.[held] === undefined ? undefined : (adapter as OncelyPrismaAdapter);
}

/** What ends a transaction {@link openHeldTransaction} opened. */
interface HeldPrisma {
  readonly hand: Handoff;
  finish(commit: boolean): void;
  readonly running: Promise<unknown>;
}

const heldTransactions = new WeakMap<object, HeldPrisma>();

/** Thrown out of Prisma's callback so Prisma rolls its transaction back (answered locally: oncely sends its ROLLBACK). */
class HeldRollback extends Error {}

/**
 * Opens Prisma's interactive transaction (`start`, the client's `$transaction`) over `client`,
 * inside the transaction oncely's claim opened: resolves with Prisma's transaction client while its
 * callback stays open until {@link endHeldTransaction}.
 */
export async function openHeldTransaction<Tx extends object>(
  adapter: OncelyPrismaAdapter,
  client: PgClientLike,
  isolationLevel: string | undefined,
  start: (callback: (tx: Tx) => Promise<void>) => PromiseLike<unknown>,
): Promise<Tx> {
  const state = adapter[held];
  if (state.storage === undefined) {
    // Loaded here, not at import: the subpath also serves Prisma on PGlite, where node:async_hooks may not exist.
    const { AsyncLocalStorage } = await import('node:async_hooks');
    state.storage ??= new AsyncLocalStorage<Handoff>();
  }
  const hand: Handoff = { client, isolation: setIsolation(isolationLevel), taken: false, state: 'opening', closing: false };
  const opened = deferred<Tx>();
  const decided = deferred<boolean>();
  const running = Promise.resolve(
    state.storage.run(hand, () =>
      start(async (tx) => {
        // Prisma started this transaction elsewhere (the client is not on this adapter): it must not run the handler.
        if (!hand.taken) throw new OncelyError('invalid_option', 'oncely/postgres: Prisma started this transaction without the oncelyAdapter the client was built with');
        opened.resolve(tx);
        if (!(await decided.promise)) throw new HeldRollback('oncely/postgres: the transaction rolls back as decided');
      }),
    ),
  );
  const outcome = await Promise.race([opened.promise.then((tx) => ({ tx })), running.then(() => ({ error: undefined }), (error: unknown) => ({ error }))]);
  if (!('tx' in outcome)) throw hand.refused ?? outcome.error ?? new Error('oncely/postgres: Prisma ended its transaction before the handler ran');
  heldTransactions.set(outcome.tx, { hand, finish: decided.resolve, running });
  return outcome.tx;
}

/** Ends Prisma's side of the transaction (nothing sent: oncely's save + COMMIT or its ROLLBACK follows); with `commit`, a failure there (Prisma's timeout) fails it. */
export async function endHeldTransaction(tx: object, commit: boolean): Promise<void> {
  const transaction = heldTransactions.get(tx);
  if (transaction === undefined) return;
  heldTransactions.delete(tx);
  transaction.hand.closing = true;
  transaction.finish(commit);
  try {
    await transaction.running;
  } catch (error) {
    // Rolling back anyway: what Prisma says about its side changes nothing.
    if (commit) throw error;
  } finally {
    transaction.hand.state = 'ended';
  }
}
