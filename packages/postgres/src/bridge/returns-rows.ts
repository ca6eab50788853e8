/** Keywords that make a statement answer rows: a query, or data-changing SQL with a RETURNING list. */
const QUERY_KEYWORDS = new Set(['select', 'values', 'table', 'show', 'explain']);
const CHANGE_KEYWORDS = new Set(['insert', 'update', 'delete', 'merge']);

/**
 * The words of `text` outside parentheses, string literals, quoted identifiers and comments:
 * enough to see a statement's shape (its leading keyword, a top-level RETURNING), never its values.
 */
function topLevelWords(text: string): string[] {
  const words: string[] = [];
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end + 1;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (c === "'" || c === '"') {
      // A doubled quote inside is an escaped one: skipping to each next quote handles it.
      let end = text.indexOf(c, i + 1);
      while (end !== -1 && text[end + 1] === c) end = text.indexOf(c, end + 2);
      i = end === -1 ? text.length : end + 1;
    } else if (c === '$' && /[A-Za-z_]/.test(next ?? '')) {
      // A dollar-quoted string, $tag$…$tag$ ($1 parameters start with a digit and are not matched).
      const tag = /^\$[A-Za-z_][A-Za-z0-9_]*\$/.exec(text.slice(i))?.[0];
      const end = tag === undefined ? -1 : text.indexOf(tag, i + tag.length);
      i = tag === undefined ? i + 1 : end === -1 ? text.length : end + tag.length;
    } else if (c === '$' && next === '$') {
      const end = text.indexOf('$$', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (c === '(') {
      depth++;
      i++;
    } else if (c === ')') {
      depth--;
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(text.slice(i))![0];
      if (depth === 0) words.push(word.toLowerCase());
      i += word.length;
    } else i++;
  }
  return words;
}

/**
 * Whether one SQL statement answers rows (SELECT, VALUES, TABLE, SHOW, EXPLAIN, or INSERT, UPDATE,
 * DELETE, MERGE with a top-level RETURNING), or only a count of affected rows (anything else). A
 * `WITH` statement is judged by the statement its common table expressions lead to. Written for
 * oncely's own statements, which it is tested against: backslash escapes in `E'…'` strings are not read.
 */
export function returnsRows(text: string): boolean {
  const words = topLevelWords(text);
  const main = words[0] === 'with' ? words.find((word) => QUERY_KEYWORDS.has(word) || CHANGE_KEYWORDS.has(word)) : words[0];
  if (main === undefined) return false;
  return QUERY_KEYWORDS.has(main) || (CHANGE_KEYWORDS.has(main) && words.includes('returning'));
}
