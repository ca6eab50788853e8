import type pg from 'pg';
import type { PgPoolLike, PgQueryConfigLike } from '../../src/index.js';

/** The store's statements, told apart by what only each of them says. */
export type StatementName = 'claim' | 'complete' | 'release' | 'extend' | 'get' | 'purge';

const statementOf = (text: string): StatementName | undefined => {
  if (text.startsWith('WITH settings AS') || text.startsWith('WITH existing AS')) return 'claim';
  if (text.includes('state = $6') && text.includes('AND lease_expires_at > statement_timestamp()')) return 'complete';
  if (text.startsWith('DELETE FROM') && text.includes('lease_token = $5')) return 'release';
  if (text.includes('lease_expires_at = statement_timestamp() + $6')) return 'extend';
  if (text.startsWith('SELECT fingerprint')) return 'get';
  if (text.includes('ctid = ANY')) return 'purge';
  return undefined;
};

/** One edit of the store's real SQL. */
export interface SqlMutation {
  /** The statement it edits, or every statement the store sends. */
  readonly statement: StatementName | 'every';
  readonly from: string | RegExp;
  readonly to: string;
  /** How many times `from` occurs in that statement (default 1): a changed statement fails loudly. */
  readonly occurrences?: number;
}

const occurrencesOf = (text: string, from: string | RegExp) =>
  typeof from === 'string' ? text.split(from).length - 1 : (text.match(new RegExp(from.source, `${from.flags.replace('g', '')}g`)) ?? []).length;

/** A pool whose statements reach the server with `mutations` applied; `applied` counts the statements it changed. */
export interface MutatedPool extends PgPoolLike {
  readonly applied: () => number;
}

/**
 * Wraps a pool so the store's own SQL reaches the server with one bug in it. A mutation whose site
 * is not in its statement (the store's SQL changed) throws, naming it, instead of testing nothing.
 */
export function mutatedPool(pool: pg.Pool, mutations: readonly SqlMutation[]): MutatedPool {
  let applied = 0;
  const mutate = (textOrConfig: string | PgQueryConfigLike): string | PgQueryConfigLike => {
    const text = typeof textOrConfig === 'string' ? textOrConfig : textOrConfig.text;
    const statement = statementOf(text);
    let mutated = text;
    for (const mutation of mutations) {
      if (mutation.statement !== 'every' && mutation.statement !== statement) continue;
      if (mutation.statement === 'every' && statement === undefined) continue;
      const found = occurrencesOf(mutated, mutation.from);
      if (mutation.statement !== 'every' && found !== (mutation.occurrences ?? 1)) {
        throw new Error(`the mutation site ${String(mutation.from)} occurs ${found} times in the ${statement} statement, not ${mutation.occurrences ?? 1}: update the corpus`);
      }
      mutated = typeof mutation.from === 'string' ? mutated.split(mutation.from).join(mutation.to) : mutated.replace(new RegExp(mutation.from.source, `${mutation.from.flags.replace('g', '')}g`), mutation.to);
    }
    if (mutated === text) return textOrConfig;
    applied += 1;
    // Sent unnamed: a prepared name belongs to the unmutated text.
    return mutated;
  };
  return {
    applied: () => applied,
    get totalCount() {
      return pool.totalCount;
    },
    query: (textOrConfig, values) => {
      const sent = mutate(textOrConfig);
      return typeof sent === 'string' && typeof textOrConfig !== 'string' ? pool.query(sent, textOrConfig.values) : pool.query(sent, values);
    },
    async connect() {
      const client = await pool.connect();
      return {
        query: (textOrConfig: string | PgQueryConfigLike, values?: unknown[]) => {
          const sent = mutate(textOrConfig);
          return typeof sent === 'string' && typeof textOrConfig !== 'string' ? client.query(sent, textOrConfig.values) : client.query(sent, values);
        },
        release: (error?: Error | boolean) => client.release(error),
        on: (event: 'error', listener: (error: Error) => void) => client.on(event, listener),
        removeListener: (event: 'error', listener: (error: Error) => void) => client.removeListener(event, listener),
      };
    },
  };
}
