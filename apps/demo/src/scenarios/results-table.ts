import type { ScenarioResult } from './scenario.js';

const COLUMNS = ['#', 'scenario', 'attempts', 'effects observed', 'expected', 'result'] as const;

/** Renders the results as a plain-text table, then one line per broken expectation. */
export function resultsTable(results: readonly ScenarioResult[]): string {
  const rows = results.map((result) => [
    String(result.id),
    result.title,
    String(result.attempts),
    result.observed,
    result.expected,
    result.verdict,
  ]);
  const widths = COLUMNS.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  const lines = [line(COLUMNS), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)];
  for (const result of results) {
    for (const failure of result.failures) lines.push(`  #${result.id} ${result.title}: ${failure}`);
  }
  return lines.join('\n');
}
