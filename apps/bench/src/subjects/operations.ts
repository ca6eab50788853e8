import type { PaymentEffect } from './payment-effect.js';
import type { CallOutcome, IdempotentSubject } from './subject.js';

/** The two timed operations every contender offers. */
export interface Operations {
  readonly name: string;
  /** A request with a fresh key: the handler runs and the response is stored. */
  first(key: string): Promise<void>;
  /** A repeat of a key whose first request completed: the stored response comes back. */
  replay(key: string): Promise<void>;
  settle(): Promise<void>;
  close(): Promise<void>;
}

function expect(name: string, key: string, outcome: CallOutcome, kind: CallOutcome['kind']): void {
  if (outcome.kind !== kind) {
    throw new Error(`bench: ${name} answered ${JSON.stringify(outcome)} for ${key}, expected ${kind}`);
  }
}

/**
 * Times a library through its own API; checks every answer, so a replay that re-executes or a
 * first request that replays fails the run instead of being counted as fast work.
 */
export function subjectOperations(subject: IdempotentSubject, effect: PaymentEffect): Operations {
  return {
    name: subject.name,
    async first(key) {
      expect(subject.name, key, await subject.execute(key, effect.forKey(key)), 'executed');
    },
    async replay(key) {
      expect(subject.name, key, await subject.execute(key, effect.forKey(key)), 'replayed');
    },
    settle: () => subject.settle(),
    close: () => subject.close(),
  };
}
