import type { Matchers, TestRunner } from './runner.js';

/**
 * A contract clause's id, `<contract>.<method>.<case>` (e.g. `store.release.lapsed`). Every test
 * names the clauses it proves, and every failure names the clause it caught broken.
 */
export type ClauseId = string;

/** A test's name: its clause ids in brackets, then what it proves. */
export const clauseTitle = (clauses: readonly ClauseId[], title: string): string => `[${clauses.join(', ')}] ${title}`;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * Prefixes a failure with the clause it breaks and what went wrong. The same error object goes on
 * (only its message changes), so the runner still prints its expected/actual diff.
 */
export function clauseFailure(clause: ClauseId, failure: string, error: unknown): Error {
  const annotated = asError(error);
  annotated.message = `${clause}: ${failure}\n${annotated.message}`;
  return annotated;
}

/** Names a test's clauses on a failure that does not name one yet (a store that threw, say). */
export function namedFailure(clauses: readonly ClauseId[], error: unknown): Error {
  const annotated = asError(error);
  if (!clauses.some((clause) => annotated.message.startsWith(`${clause}:`))) {
    annotated.message = `${clauses.join(', ')}: ${annotated.message}`;
  }
  return annotated;
}

const MATCHERS = [
  'toBe',
  'toEqual',
  'toBeGreaterThan',
  'toBeGreaterThanOrEqual',
  'toBeLessThanOrEqual',
  'toBeUndefined',
  'toBeDefined',
] as const satisfies readonly (keyof Matchers)[];

/**
 * `must(clause, failure, actual)`: the runner's `expect(actual)`, whose failures read
 * `store.release.lapsed: release by a lapsed owner was accepted` before the runner's own message.
 */
export type ClauseExpect = (clause: ClauseId, failure: string, actual: unknown) => Matchers & { readonly not: Matchers };

/** Builds a {@link ClauseExpect} on the runner's `expect`. */
export function clauseExpect(expect: TestRunner['expect']): ClauseExpect {
  const wrap = (clause: ClauseId, failure: string, matchers: Matchers): Matchers => {
    const wrapped = {} as Record<keyof Matchers, (...args: unknown[]) => void>;
    for (const name of MATCHERS) {
      wrapped[name] = function matcher(...args: unknown[]) {
        try {
          (matchers[name] as (...values: unknown[]) => void)(...args);
        } catch (error) {
          const failed = clauseFailure(clause, failure, error);
          // The stack starts at the assertion in the suite, not inside this wrapper.
          Error.captureStackTrace?.(failed, matcher);
          throw failed;
        }
      };
    }
    return wrapped as Matchers;
  };
  // Each side gets its own expect(actual): reading `.not` flips a flag on Chai's assertion object.
  return (clause, failure, actual) =>
    Object.assign(wrap(clause, failure, expect(actual)), {
      get not() {
        return wrap(clause, failure, expect(actual).not);
      },
    });
}

/**
 * Registers a test named for its clauses; a failure that names none of them gets them prefixed, so
 * every failure says which clause of the contract broke.
 */
export function clauseTest(it: TestRunner['it'], timeoutMs: number) {
  return (clauses: readonly ClauseId[], title: string, body: () => Promise<void>, ms = timeoutMs): void =>
    it(
      clauseTitle(clauses, title),
      async () => {
        try {
          await body();
        } catch (error) {
          throw namedFailure(clauses, error);
        }
      },
      ms,
    );
}

/** Like {@link clauseTest}, with a fresh resource (a store, a journal, an outbox) per test, always closed. */
export function resourceTest<R>(it: TestRunner['it'], timeoutMs: number, open: () => R | Promise<R>, close: (resource: R) => Promise<void>) {
  const named = clauseTest(it, timeoutMs);
  return (clauses: readonly ClauseId[], title: string, body: (resource: R) => Promise<void>, ms?: number): void =>
    named(
      clauses,
      title,
      async () => {
        const resource = await open();
        try {
          await body(resource);
        } finally {
          await close(resource);
        }
      },
      ms,
    );
}
