/** A cell: numbers are formatted by the caller, so the table never guesses precision. */
export type Cell = string | number;

/** Renders a GitHub-flavoured Markdown table. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const line = (cells: readonly Cell[]) => `| ${cells.map((c) => String(c).replaceAll('|', '\\|')).join(' | ')} |`;
  const rule = `| ${headers.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

/** Formats a rate: thousands separators, no decimals. */
export function formatRate(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a';
}

/** Formats milliseconds with two decimals (three below 0.1 ms). */
export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value < 0.1 ? value.toFixed(3) : value.toFixed(2);
}

/** Formats a ratio as `0.93×`. */
export function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a';
}
