import type pg from 'pg';
import type { PgPoolLike, PgQueryConfigLike } from '../../src/index.js';

/** A statement as it reached the server, and on which connection. */
export interface Sent {
  readonly connection: number;
  readonly text: string;
}

/** The SQL of a plain or a named (prepared) statement. */
const textOf = (textOrConfig: string | PgQueryConfigLike) => (typeof textOrConfig === 'string' ? textOrConfig : textOrConfig.text);

/**
 * Wraps a pool so every statement is recorded: one statement is one round trip with pg, which is
 * how the round-trip figures in the README are counted (the bench can wrap its pool the same way).
 */
export function countingPool(pool: pg.Pool): PgPoolLike & { readonly sent: Sent[] } {
  const sent: Sent[] = [];
  let connections = 0;
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
      const connection = ++connections;
      return {
        query(textOrConfig: string | PgQueryConfigLike, values?: unknown[]) {
          sent.push({ connection, text: textOf(textOrConfig) });
          return client.query(textOrConfig, values);
        },
        release: (error?: Error | boolean) => client.release(error),
      };
    },
  };
}

/** What kind of statement each one was: BEGIN, COMMIT, ROLLBACK, or the first SQL keyword. */
export const kinds = (sent: readonly Sent[]) => sent.map(({ text }) => text.trim().split(/\s+/)[0]!.toUpperCase());
