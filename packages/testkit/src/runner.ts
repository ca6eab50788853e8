/** The few matchers the suites use; Vitest's, Jest's and Bun's `expect` all provide them. */
export interface Matchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeGreaterThan(expected: number): void;
  toBeGreaterThanOrEqual(expected: number): void;
  toBeLessThanOrEqual(expected: number): void;
  toBeUndefined(): void;
  toBeDefined(): void;
}

/** The test runner's `describe`, `it` and `expect`, so the suites run under any of them. */
export interface TestRunner {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  expect(actual: unknown): Matchers & { readonly not: Matchers };
}

/** Sleeps on the real clock. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let counter = 0;
/** A key no other test (or earlier run against the same server) has used. */
export function uniqueKey(label: string): string {
  counter += 1;
  return `${label}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}
