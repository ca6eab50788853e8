import { type LiteralValue, literal } from './literal.js';
import { sessionName } from './prepared.js';

/**
 * One of oncely's statements with its values written in, for a simple-protocol message:
 * `EXECUTE name(…)` when it is prepared on this connection (`preparedHere`), else its own text with
 * a literal in place of every `$n`. Only for oncely's statements: their text has no other `$`.
 */
export function invocation(text: string, values: readonly LiteralValue[], preparedHere?: ReadonlySet<string>): string {
  const name = sessionName(text);
  // A statement without parameters is executed without parentheses: `EXECUTE name()` is a syntax error.
  if (name !== undefined && preparedHere?.has(name)) return values.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${values.map(literal).join(', ')})`;
  return text.replace(/\$(\d+)/g, (_, index: string) => literal(values[Number(index) - 1] ?? null));
}

/** The `PREPARE` of an oncely statement under its {@link sessionName}. */
export function preparation(text: string): { readonly name: string; readonly text: string } {
  const name = sessionName(text);
  if (name === undefined) throw new Error('oncely/postgres: only oncely statements are prepared');
  return { name, text: `PREPARE ${name} AS ${text}` };
}

/**
 * The `PREPARE`s a message must lead with for the statements it runs, and the names ready once they
 * ran (for {@link invocation}); nothing and undefined when the store does not prepare.
 */
export function preparations(
  texts: readonly string[],
  prepared: ReadonlySet<string>,
  enabled: boolean,
): { readonly preparing: { readonly name: string; readonly text: string }[]; readonly ready: ReadonlySet<string> | undefined } {
  if (!enabled) return { preparing: [], ready: undefined };
  const preparing = texts.filter((text) => !prepared.has(sessionName(text) ?? '')).map(preparation);
  // Once all are prepared (every request but a connection's first), the tracked set is the answer: no copy.
  return { preparing, ready: preparing.length === 0 ? prepared : new Set([...prepared, ...preparing.map((p) => p.name)]) };
}

/** Reads the oncely statements this connection has `PREPARE`d, after it turned out to differ from what was tracked. */
export const PREPARED_HERE = `SELECT name FROM pg_prepared_statements WHERE name LIKE 'oncely\\_%\\_s'`;
