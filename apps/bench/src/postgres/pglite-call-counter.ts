import type { PGlite } from '@electric-sql/pglite';

/** Exchanges with the embedded backend, counted at PGlite's API. */
export interface PgliteCalls {
  /** `query`/`exec` calls plus the BEGIN and COMMIT/ROLLBACK that `transaction()` sends itself. */
  readonly roundTrips: number;
  /** `query`/`exec` calls (a multi-statement `exec` counts once). */
  readonly statements: number;
}

/** A PGlite instance that counts calls, and the counts so far. */
export interface CountingPglite {
  readonly db: PGlite;
  calls(): PgliteCalls;
}

/**
 * Wraps `db` so every `query`, `exec` and `transaction` (and the handle a transaction passes to its
 * callback) is counted. PGlite has no socket to watch, so its API is the boundary that is counted.
 */
export function countingPglite(db: PGlite): CountingPglite {
  let statements = 0;
  let transactions = 0;
  const counted = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property, object) as unknown;
        if (typeof value !== 'function') return value;
        if (property === 'query' || property === 'exec') {
          return (...args: unknown[]) => {
            statements++;
            return (value as (...a: unknown[]) => unknown).apply(object, args);
          };
        }
        if (property === 'transaction') {
          return (callback: (tx: object) => Promise<unknown>) => {
            transactions++;
            return (value as (cb: (tx: object) => Promise<unknown>) => unknown).call(object, (tx: object) =>
              callback(counted(tx)),
            );
          };
        }
        // PGlite keeps state in private fields: methods must run on the real instance.
        return (value as (...a: unknown[]) => unknown).bind(object);
      },
    });
  return {
    db: counted(db),
    calls: () => ({ roundTrips: statements + 2 * transactions, statements }),
  };
}
