import { paymentEffect } from '../subjects/payment-effect.js';
import type { CallOutcome, IdempotentSubject } from '../subjects/subject.js';

/** Options of {@link runRace}. */
export interface RaceOptions {
  readonly keys: number;
  /** Calls fired at once for every key. */
  readonly duplicates: number;
  /** Keys whose duplicates are in flight at the same time. */
  readonly keysInFlight: number;
  readonly keyPrefix: string;
}

/** What a race did to the business state. */
export interface RaceResult {
  readonly name: string;
  readonly keys: number;
  /** Side-effect executions; the correct answer is `keys`. */
  readonly executions: number;
  /** Keys whose side effect ran more than once. */
  readonly duplicatedKeys: number;
  /** Keys whose side effect never ran. */
  readonly lostKeys: number;
  readonly outcomes: Readonly<Record<CallOutcome['kind'], number>>;
}

/**
 * Fires `duplicates` concurrent calls per key for `keys` keys and counts how often the side effect
 * really ran. Correctness is the business count, not what the library answered.
 */
export async function runRace(subject: IdempotentSubject, options: RaceOptions): Promise<RaceResult> {
  const effect = paymentEffect(true);
  const outcomes: Record<CallOutcome['kind'], number> = { executed: 0, replayed: 0, in_progress: 0, rejected: 0 };
  const keys = Array.from({ length: options.keys }, (_, i) => `${options.keyPrefix}-race-${i}`);
  let next = 0;
  const lane = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      const results = await Promise.all(
        Array.from({ length: options.duplicates }, () => subject.execute(key, effect.forKey(key))),
      );
      for (const outcome of results) outcomes[outcome.kind]++;
    }
  };
  await Promise.all(Array.from({ length: options.keysInFlight }, lane));
  await subject.settle();
  return {
    name: subject.name,
    keys: keys.length,
    executions: effect.total,
    duplicatedKeys: effect.duplicatedKeys(),
    lostKeys: keys.filter((key) => effect.executions(key) === 0).length,
    outcomes,
  };
}
