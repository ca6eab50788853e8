import { invocation, PREPARED_HERE, preparation } from '../sql/invocation.js';
import { literalValues } from '../sql/literal.js';
import { sessionName } from '../sql/prepared.js';
import type { PGliteLike, PGliteResultLike, PGliteTransactionLike } from './postgres-db.js';
import { preparedOn, resetPrepared } from './prepared-on.js';
import { isPreparedMismatch } from './sql-state.js';

type Exec = (text: string) => Promise<readonly PGliteResultLike[]>;

/** PGlite's `exec` resolves to one result per statement. */
const execOf =
  (target: Pick<PGliteLike, 'exec'>): Exec =>
  (text) =>
    target.exec(text) as Promise<readonly PGliteResultLike[]>;


/** oncely's statements on one PGlite instance, and how they run there. */
export interface PgliteStatements {
  /** Outside a transaction; undefined when `text` is not oncely's or a value is not a literal (run it as a query). */
  outside(text: string, params?: readonly unknown[]): Promise<PGliteResultLike | undefined>;
  /** Inside `tx`: only a statement already prepared, since a failed PREPARE would abort the transaction. */
  inside(tx: PGliteTransactionLike, text: string, params?: readonly unknown[]): Promise<PGliteResultLike | undefined>;
  /** PREPAREs what `texts` still lack, outside any transaction. */
  prepare(texts: readonly string[]): Promise<void>;
}

/**
 * Runs oncely's statements on PGlite as `EXECUTE` of a statement `PREPARE`d once per instance, with
 * literal values, through `exec` (the simple protocol). PGlite's `query` plans every call and takes
 * five protocol exchanges with the backend; the claim's CTE costs more to plan than to run.
 */
export function pgliteStatements(db: PGliteLike): PgliteStatements {
  const prepared = preparedOn(db);
  const exec = execOf(db);

  /** Re-reads what this instance has prepared: another driver object over it prepared some already. */
  async function resync(): Promise<void> {
    const [result] = await exec(PREPARED_HERE);
    resetPrepared(prepared, result?.rows as Record<string, unknown>[] | undefined);
  }

  /** Runs `attempt` again after a resync when what was tracked turned out wrong (42P05, 26000). */
  async function tracked<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      if (!isPreparedMismatch(error)) throw error;
      await resync();
      return attempt();
    }
  }

  return {
    async outside(text, params = []) {
      const name = sessionName(text);
      if (name === undefined || !literalValues(params)) return undefined;
      return tracked(async () => {
        const preparing = prepared.has(name) ? [] : [preparation(text).text];
        const results = await exec([...preparing, invocation(text, params, new Set([name]))].join(';\n'));
        prepared.add(name);
        return results.at(-1);
      });
    },
    async inside(tx, text, params = []) {
      const name = sessionName(text);
      if (name === undefined || !prepared.has(name) || !literalValues(params)) return undefined;
      return (await execOf(tx)(invocation(text, params, prepared))).at(-1);
    },
    async prepare(texts) {
      await tracked(async () => {
        const missing = texts.map(preparation).filter((statement) => !prepared.has(statement.name));
        if (missing.length === 0) return;
        await exec(missing.map((statement) => statement.text).join(';\n'));
        for (const statement of missing) prepared.add(statement.name);
      });
    },
  };
}
