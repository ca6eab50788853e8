import { type AlternatingResult, medianRatio } from './alternating.js';
import { formatMs, formatRate, formatRatio, markdownTable } from './markdown.js';

/** One row: a contender, and the contender its throughput is divided by (none for a baseline). */
export interface ThroughputRow {
  readonly name: string;
  readonly baseline?: string;
}

/** Median ops/s, p50 and p99 per contender, and its median same-round ratio to its baseline. */
export function throughputTable(result: AlternatingResult, rows: readonly ThroughputRow[]): string {
  return markdownTable(
    ['contender', 'ops/s (median)', 'p50 ms', 'p99 ms', '÷ baseline (median of rounds)'],
    rows.map((row) => {
      const r = result.byName.get(row.name);
      if (!r) throw new Error(`bench: no result for ${row.name}`);
      return [
        row.name,
        formatRate(r.medianOpsPerSec),
        formatMs(r.medianP50),
        formatMs(r.medianP99),
        row.baseline ? `${formatRatio(medianRatio(result, row.name, row.baseline))} ${row.baseline}` : 'baseline',
      ];
    }),
  );
}
