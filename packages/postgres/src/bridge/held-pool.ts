import type { PgPoolClientLike, PgPoolLike } from '../driver/postgres-db.js';

/** An ORM's own connection checkout as a `pg.Pool` oncely can hold connections of; a lone statement borrows one. */
export function heldPool(connect: () => Promise<PgPoolClientLike>): PgPoolLike {
  return {
    totalCount: 0,
    connect: () => connect(),
    async query(textOrConfig, values) {
      const held = await connect();
      try {
        return await held.query(textOrConfig, values);
      } finally {
        held.release();
      }
    },
  };
}
