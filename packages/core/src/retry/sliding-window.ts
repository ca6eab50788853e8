/** Counts per field over the last `windowMs`, exact to the millisecond; memory is bounded by `windowMs` entries. */
export interface SlidingWindow<F extends string> {
  /** Adds `amount` to `field` at time `now`. */
  add(now: number, field: F, amount?: number): void;
  /** Totals of the window `(now - windowMs, now]`. */
  totals(now: number): Readonly<Record<F, number>>;
  /** Forgets everything (a breaker that changes state starts a fresh sample). */
  clear(): void;
}

/** Creates a {@link SlidingWindow}. Time never runs backwards inside it, whatever the clock does. */
export function slidingWindow<F extends string>(windowMs: number, fields: readonly F[]): SlidingWindow<F> {
  const zero = () => Object.fromEntries(fields.map((field) => [field, 0])) as Record<F, number>;
  let entries: { at: number; counts: Record<F, number> }[] = [];
  let head = 0;
  let sums = zero();
  let latest = Number.NEGATIVE_INFINITY;

  const evict = (now: number) => {
    latest = Math.max(latest, now);
    const horizon = latest - windowMs;
    while (head < entries.length && entries[head]!.at <= horizon) {
      const gone = entries[head]!.counts;
      for (const field of fields) sums[field] -= gone[field];
      head += 1;
    }
    // Compact once the dead prefix dominates, so the array does not grow without bound.
    if (head > 1_024 && head * 2 > entries.length) {
      entries = entries.slice(head);
      head = 0;
    }
  };

  return {
    add(now, field, amount = 1) {
      evict(now);
      const last = entries[entries.length - 1];
      if (last && head < entries.length && last.at === latest) {
        last.counts[field] += amount;
      } else {
        const counts = zero();
        counts[field] = amount;
        entries.push({ at: latest, counts });
      }
      sums[field] += amount;
    },
    totals(now) {
      evict(now);
      return { ...sums };
    },
    clear() {
      entries = [];
      head = 0;
      sums = zero();
    },
  };
}
