import { OncelyError } from '@oncely/core';
import type { PostgresJsSqlLike } from '../driver/postgres-db.js';

/** A savepoint's callback, as postgres.js's `sql.savepoint` and Drizzle's postgres.js transaction call it. */
type SavepointWork = (sql: PostgresJsSqlLike) => unknown;

/**
 * `sql` with the `savepoint(fn)` / `savepoint(name, fn)` a postgres.js `sql.begin` transaction has and
 * a reserved connection lacks: `SAVEPOINT s<n>`, `fn` on the same `sql`, `ROLLBACK TO` it when `fn`
 * throws (rethrowing), left standing when it resolves (as postgres.js does: one round trip less).
 */
export function withSavepoints<S extends PostgresJsSqlLike>(sql: S): S {
  let count = 0;
  const view: S = new Proxy(sql, {
    get: (target, property, receiver) => (property === 'savepoint' ? savepoint : Reflect.get(target, property, receiver)),
  });
  async function savepoint(nameOrWork: string | SavepointWork, maybeWork?: SavepointWork): Promise<unknown> {
    const work = typeof nameOrWork === 'function' ? nameOrWork : maybeWork;
    const label = typeof nameOrWork === 'string' ? nameOrWork : '';
    // Names are spliced into the statement: identifier characters only.
    if (typeof work !== 'function' || !/^\w*$/.test(label)) throw new OncelyError('invalid_option', 'oncely/postgres: savepoint takes a callback and an optional name of letters, digits and _');
    const name = `s${count++}${label ? `_${label}` : ''}`;
    await sql.unsafe(`SAVEPOINT ${name}`);
    try {
      return await work(view);
    } catch (error) {
      await sql.unsafe(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    }
  }
  return view;
}
