import { describe, expect, it } from 'vitest';
import type { RecordedTest } from '../../src/index.js';
import { corpus, run } from './corpus.js';

const summary = (tests: readonly RecordedTest[]) =>
  tests.map((test) => `${test.error ? 'FAIL' : 'pass'} ${test.name}${test.error ? `\n  ${test.error.message.split('\n')[0]}` : ''}`).join('\n');

describe('the store suite against single-bug stores (memory)', () => {
  it('passes the reference store without a bug, every test of it', async () => {
    const tests = await run(expect, undefined);
    expect(tests.length).toBeGreaterThanOrEqual(30);
    expect(summary(tests.filter((test) => test.error))).toBe('');
  }, 120_000);

  it.each(corpus)('the bug %s fails the test of [%s], and the failure names that clause', async (bug, clause) => {
    const tests = await run(expect, bug, { clauses: [clause] });
    expect(tests.length).toBeGreaterThan(0);
    const caught = tests.filter((test) => test.error && test.broken.length === 1 && test.broken[0] === clause);
    if (process.env.ONCELY_MUTANT_REPORT) console.log(`${bug}: ${caught[0]?.error?.message.split('\n')[0]}`);
    expect(caught.length, summary(tests)).toBeGreaterThan(0);
  }, 60_000);

  it('covers at least 25 bugs, each its own', () => {
    expect(new Set(corpus.map(([bug]) => bug)).size).toBe(corpus.length);
    expect(corpus.length).toBeGreaterThanOrEqual(25);
  });
});
