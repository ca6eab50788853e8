import type { PgPoolClientLike, PgPoolLike } from './postgres-db.js';

/**
 * Checks a client out of a pool with `onError` listening from the moment pg-pool hands it over.
 * pg-pool drops its own listener on checkout and resolves its promise a tick later, while a backend
 * killed right after connecting sends its error in the same packet as ready-for-query: through the
 * promise alone, that `'error'` event finds no listener and crashes the process. pg-pool calls a
 * callback synchronously, so the listener goes on first; a pool that only returns a promise still works.
 */
export function checkout(pool: PgPoolLike, onError: (error: Error) => void): Promise<PgPoolClientLike> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error: Error | undefined, client: PgPoolClientLike | undefined) => {
      if (settled) return;
      settled = true;
      if (error || !client) return reject(error ?? new Error('oncely/postgres: the pool handed over no client'));
      client.on?.('error', onError);
      resolve(client);
    };
    const returned = pool.connect(settle);
    if (returned) returned.then((client) => settle(undefined, client), (error: Error) => settle(error, undefined));
  });
}
