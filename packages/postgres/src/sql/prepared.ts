/** Statement text → its prepared-statement name, for every statement oncely issues itself. */
const names = new Map<string, string>();

/** FNV-1a over UTF-16 code units, in two independently seeded 32-bit lanes: a 64-bit name. */
function nameOf(text: string): string {
  let a = 0x811c9dc5;
  let b = 0xcbf29ce4;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    a = Math.imul(a ^ unit, 0x01000193) >>> 0;
    b = Math.imul(b ^ unit, 0x01000193 ^ 0x5bd1e995) >>> 0;
  }
  return `oncely_${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`;
}

/**
 * Marks every SQL text of `statements` as one to prepare: PostgreSQL plans a named statement once per
 * connection instead of on every call (the claim's CTE costs more to plan than to run). Names derive
 * from the text, so stores over different tables, or two copies of this package, never clash.
 */
export function prepared<T extends object>(statements: T): T {
  for (const text of Object.values(statements)) {
    if (typeof text === 'string' && !names.has(text)) names.set(text, nameOf(text));
  }
  return statements;
}

/** The prepared-statement name of an oncely statement; undefined for any other SQL (the caller's). */
export function preparedName(text: string): string | undefined {
  return names.get(text);
}

/**
 * The name an oncely statement is `PREPARE`d under in SQL (simple-protocol messages run it with
 * `EXECUTE`). It differs from {@link preparedName}: pg's protocol-level statements share the namespace.
 */
export function sessionName(text: string): string | undefined {
  const name = names.get(text);
  return name && `${name}_s`;
}
