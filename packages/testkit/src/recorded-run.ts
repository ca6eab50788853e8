import type { ClauseId } from './clause.js';
import type { TestRunner } from './runner.js';

/** One test of a {@link recordSuite} run: its name, the clauses it proves, and how it ended. */
export interface RecordedTest {
  /** `describe` names and the test's own, joined by ` > `. */
  readonly name: string;
  /** The clause ids in the test's name. */
  readonly clauses: readonly ClauseId[];
  /** What the test threw; undefined when it passed. */
  readonly error?: Error;
  /** The clause ids the failure names first (`store.release.lapsed: …`); empty when it passed. */
  readonly broken: readonly ClauseId[];
}

/** Options of {@link recordSuite}. */
export interface RecordSuiteOptions {
  /** Runs only the tests whose full name it accepts (default: every test). */
  readonly filter?: (test: { readonly name: string; readonly clauses: readonly ClauseId[] }) => boolean;
  /** A test still running after this many ms fails with a timeout (default 60 000). */
  readonly timeoutMs?: number;
}

/** The clause ids of a test name: `[store.claim.atomic, store.engine.once] …`. */
export const clausesOfTitle = (name: string): ClauseId[] => {
  const bracket = /\[([a-z0-9.\-, ]+)\]/.exec(name);
  return bracket ? bracket[1]!.split(',').map((clause) => clause.trim()) : [];
};

/** The clause ids a failure message starts with: `store.release.lapsed: …` or `a, b: …`. */
export const clausesOfFailure = (message: string): ClauseId[] => {
  const head = /^([a-z0-9.\-, ]+): /.exec(message);
  return head ? head[1]!.split(',').map((clause) => clause.trim()) : [];
};

/**
 * Runs a suite outside the test runner and records every test's outcome, one test at a time:
 * registers it on a runner that collects tests, then runs them in order. This is how a store broken
 * on purpose is proven to fail the test named for its bug.
 *
 * ```ts
 * const tests = await recordSuite(expect, (runner) =>
 *   runStoreConformance(runner, { name: 'lapsed extend', createStore: () => brokenStore() }));
 * expect(tests.some((t) => t.error && t.broken.includes('store.extend.lapsed'))).toBe(true);
 * ```
 */
export async function recordSuite(
  expect: TestRunner['expect'],
  register: (runner: TestRunner) => void,
  options: RecordSuiteOptions = {},
): Promise<RecordedTest[]> {
  const registered: { name: string; body: () => Promise<void> }[] = [];
  const prefix: string[] = [];
  register({
    describe(name, body) {
      prefix.push(name);
      try {
        body();
      } finally {
        prefix.pop();
      }
    },
    it(name, body) {
      registered.push({ name: [...prefix, name].join(' > '), body });
    },
    expect,
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  const recorded: RecordedTest[] = [];
  for (const { name, body } of registered) {
    const clauses = clausesOfTitle(name);
    if (options.filter && !options.filter({ name, clauses })) continue;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([body(), timedOut]);
      recorded.push({ name, clauses, broken: [] });
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      recorded.push({ name, clauses, error, broken: clausesOfFailure(error.message) });
    } finally {
      clearTimeout(timer);
    }
  }
  return recorded;
}
