import type { Matchers, TestRunner } from '@oncely/testkit';

/** What running one test in the page reports back to Node. */
export type PageTestResult = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** A {@link TestRunner} for a browser page: suites register here, and Node runs each test by name. */
export interface PageRunner extends TestRunner {
  /** Every registered test, as `describe > … > it`. */
  names(): string[];
  run(name: string): Promise<PageTestResult>;
}

/** Joins describe and it names the way {@link PageRunner.names} reports them. */
export const testName = (path: readonly string[]) => path.join(' > ');

/** Registers tests instead of running them; the bodies run in the page when Node asks for them. */
export function pageRunner(): PageRunner {
  const tests = new Map<string, () => Promise<void>>();
  const path: string[] = [];
  return {
    describe(name, body) {
      path.push(name);
      try {
        body();
      } finally {
        path.pop();
      }
    },
    it(name, body) {
      const full = testName([...path, name]);
      if (tests.has(full)) throw new Error(`two tests are named ${full}`);
      tests.set(full, body);
    },
    expect: (actual) => ({ ...matchers(actual, false), not: matchers(actual, true) }),
    names: () => [...tests.keys()],
    async run(name) {
      const body = tests.get(name);
      if (!body) return { ok: false, message: `no test named ${name} in the page` };
      try {
        await body();
        return { ok: true };
      } catch (error) {
        return { ok: false, message: error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error) };
      }
    },
  };
}

function matchers(actual: unknown, negated: boolean): Matchers {
  const check = (pass: boolean, what: string, ...expected: unknown[]) => {
    if (pass === negated) {
      throw new Error(`expected ${show(actual)}${negated ? ' not' : ''} ${what}${expected.length > 0 ? ` ${show(expected[0])}` : ''}`);
    }
  };
  return {
    toBe: (expected) => check(Object.is(actual, expected), 'to be', expected),
    toEqual: (expected) => check(equal(actual, expected), 'to equal', expected),
    toBeGreaterThan: (expected) => check((actual as number) > expected, 'to be greater than', expected),
    toBeGreaterThanOrEqual: (expected) => check((actual as number) >= expected, 'to be at least', expected),
    toBeLessThanOrEqual: (expected) => check((actual as number) <= expected, 'to be at most', expected),
    toBeUndefined: () => check(actual === undefined, 'to be undefined'),
    toBeDefined: () => check(actual !== undefined, 'to be defined'),
  };
}

/** Deep equality as Vitest's `toEqual` has it: object members that are undefined do not count. */
function equal(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => equal(item, b[index]));
  const defined = (value: object) => Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined);
  const keys = defined(a);
  return (
    keys.length === defined(b).length &&
    keys.every((key) => equal((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
