import { markdownTable } from './markdown.js';
import type { RaceResult } from './race.js';

/** A race result, with the business rows the database holds afterwards where there is a database. */
export type RaceRow = RaceResult & { readonly committedRows?: number };

/** Side effects, duplicated and lost keys, and what the callers were answered, per library. */
export function raceTable(races: readonly RaceRow[]): string {
  const withRows = races.some((r) => r.committedRows !== undefined);
  const headers = [
    'library',
    'side effects (correct: keys)',
    ...(withRows ? ['business rows committed'] : []),
    'keys run twice+',
    'keys never run',
    'executed',
    'replayed',
    'in progress (409)',
    'rejected',
  ];
  const rows = races.map((r) => [
    r.name,
    `${r.executions.toLocaleString('en-US')} (${r.keys.toLocaleString('en-US')})`,
    ...(withRows ? [r.committedRows === undefined ? 'n/a' : r.committedRows.toLocaleString('en-US')] : []),
    r.duplicatedKeys,
    r.lostKeys,
    r.outcomes.executed,
    r.outcomes.replayed,
    r.outcomes.in_progress,
    r.outcomes.rejected,
  ]);
  return markdownTable(headers, rows);
}
