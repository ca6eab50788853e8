import type pg from 'pg';
import type { PgPoolClientLike, PgPoolLike, PgQueryConfigLike } from '../../src/index.js';

/** A statement as it reached the server, and on which connection. */
export interface Sent {
  readonly connection: number;
  readonly text: string;
}

/** The SQL of a plain or a named (prepared) statement, or of a message oncely scripted itself. */
const textOf = (textOrConfig: string | PgQueryConfigLike) => (typeof textOrConfig === 'string' ? textOrConfig : textOrConfig.text);

/**
 * Wraps a pool so every statement is recorded: one statement is one round trip with pg, which is
 * how the round-trip figures in the README are counted (the bench can wrap its pool the same way).
 */
export function countingPool(pool: pg.Pool): PgPoolLike & { readonly sent: Sent[] } {
  const sent: Sent[] = [];
  let connections = 0;
  // One wrapper per pooled connection, as pg-pool hands out the same client again.
  const wrappers = new WeakMap<pg.PoolClient, PgPoolClientLike>();
  return {
    sent,
    get totalCount() {
      return pool.totalCount;
    },
    query(textOrConfig: string | PgQueryConfigLike, values?: unknown[]) {
      sent.push({ connection: 0, text: textOf(textOrConfig) });
      return pool.query(textOrConfig, values);
    },
    async connect() {
      const client = await pool.connect();
      const known = wrappers.get(client);
      if (known) return known;
      const connection = ++connections;
      const wrapper: PgPoolClientLike = {
        query(textOrConfig: string | PgQueryConfigLike, values?: unknown[]) {
          sent.push({ connection, text: textOf(textOrConfig) });
          return client.query(textOrConfig as string, values);
        },
        release: (error?: Error | boolean) => client.release(error),
      };
      wrappers.set(client, wrapper);
      return wrapper;
    },
  };
}

/** What kind of statement each one was: BEGIN, COMMIT, ROLLBACK, or the first SQL keyword. */
export const kinds = (sent: readonly Sent[]) => sent.map(({ text }) => text.trim().split(/\s+/)[0]!.toUpperCase());

/** Each message as the first keyword of each of its statements, joined by `+` (`EXECUTE+EXECUTE+BEGIN`). */
export const messages = (sent: readonly Sent[]) =>
  sent.map(({ text }) =>
    text
      .split(/;\n/)
      .map((statement) => statement.trim().split(/\s+/)[0]!.toUpperCase())
      .join('+'),
  );
