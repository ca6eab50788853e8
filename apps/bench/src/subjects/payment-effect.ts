import type { PaymentResponse } from './subject.js';

/** The business side effect under test, counting how often it ran per key. */
export interface PaymentEffect {
  /** The handler to hand to a subject for `key`. */
  forKey(key: string): () => Promise<PaymentResponse>;
  /** Executions of `key` so far. */
  executions(key: string): number;
  /** Executions of every key so far. */
  readonly total: number;
  /** Keys that ran more than once. */
  duplicatedKeys(): number;
}

/** Creates a {@link PaymentEffect}; `track` keeps per-key counts (races), otherwise only the total. */
export function paymentEffect(track: boolean): PaymentEffect {
  const perKey = new Map<string, number>();
  let total = 0;
  return {
    forKey(key) {
      return async () => {
        total++;
        if (track) perKey.set(key, (perKey.get(key) ?? 0) + 1);
        // A real handler awaits its database; yielding once lets duplicates interleave as they would.
        await Promise.resolve();
        return { status: 201, body: { id: `pay_${key}`, amount: 1000, currency: 'EUR' } };
      };
    },
    executions: (key) => perKey.get(key) ?? 0,
    get total() {
      return total;
    },
    duplicatedKeys() {
      let count = 0;
      for (const value of perKey.values()) if (value > 1) count++;
      return count;
    },
  };
}
