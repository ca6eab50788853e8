import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AppliedRow, exactlyOnceInOrder } from '../src/index.js';

/** Each aggregate's events 1..n, interleaved across aggregates in any order that keeps each aggregate's. */
const appliedInOrder = fc
  .array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 5 })
  .chain((counts) => {
    const rows = counts.flatMap((count, aggregate) =>
      Array.from({ length: count }, (_, i): AppliedRow => ({ event_id: `a${aggregate}-${i + 1}`, aggregate_id: `a${aggregate}`, aggregate_seq: i + 1 })),
    );
    // A random interleaving: sort by a random key per row, then restore each aggregate's own order.
    return fc.array(fc.double({ noNaN: true }), { minLength: rows.length, maxLength: rows.length }).map((keys) => {
      const shuffled = rows.map((row, i) => ({ row, key: keys[i]! })).sort((a, b) => a.key - b.key);
      const next = new Map<string, number>();
      return shuffled.map(({ row }) => {
        const seq = (next.get(row.aggregate_id) ?? 0) + 1;
        next.set(row.aggregate_id, seq);
        return { event_id: `${row.aggregate_id}-${seq}`, aggregate_id: row.aggregate_id, aggregate_seq: seq };
      });
    });
  });

describe('exactlyOnceInOrder: the check every broker storm ends with', () => {
  it('finds nothing wrong with each event applied once, every aggregate in sequence', () => {
    fc.assert(
      fc.property(appliedInOrder, (rows) => {
        expect(exactlyOnceInOrder(rows, rows.length)).toEqual([]);
      }),
    );
  });

  it('finds an event applied twice', () => {
    fc.assert(
      fc.property(appliedInOrder, fc.nat(), (rows, pick) => {
        const twice = rows[pick % rows.length]!;
        expect(exactlyOnceInOrder([...rows, twice], rows.length)).toContain('1 events applied twice');
      }),
    );
  });

  it('finds an event never applied', () => {
    fc.assert(
      fc.property(appliedInOrder, (rows) => {
        expect(exactlyOnceInOrder(rows.slice(0, -1), rows.length)).toContain(`${rows.length - 1} distinct events applied, expected ${rows.length}`);
      }),
    );
  });

  it("finds an aggregate's events applied out of sequence", () => {
    fc.assert(
      fc.property(
        appliedInOrder.filter((rows) => rows.some((row) => row.aggregate_seq === 2)),
        (rows) => {
          const second = rows.findIndex((row) => row.aggregate_seq === 2);
          const first = rows.findIndex((row) => row.aggregate_id === rows[second]!.aggregate_id && row.aggregate_seq === 1);
          const swapped = [...rows];
          [swapped[first], swapped[second]] = [swapped[second]!, swapped[first]!];
          expect(exactlyOnceInOrder(swapped, rows.length).some((problem) => problem.includes('seq 2 applied after 0'))).toBe(true);
        },
      ),
    );
  });
});
