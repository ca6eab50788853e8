import type { RecordedTest } from '@oncely/testkit';
import { describe, expect, it } from 'vitest';
import { corpus } from './corpus.js';
import { mutantRunner } from './mutant-run.js';

const run = mutantRunner('mutants');

const summary = (tests: readonly RecordedTest[]) =>
  tests.map((test) => `${test.error ? 'FAIL' : 'pass'} ${test.name}${test.error ? `\n  ${test.error.message.split('\n')[0]}` : ''}`).join('\n');

describe('the store suite against single-bug PostgreSQL stores', () => {
  it.concurrent('passes the real store behind the mutation wrapper with no mutation, every test of it', async ({ expect }) => {
    const { tests, applied } = await run(expect, undefined);
    expect(tests.length).toBeGreaterThanOrEqual(30);
    expect(applied).toBe(0);
    expect(summary(tests.filter((test) => test.error))).toBe('');
  }, 180_000);

  // Each mutant has its own tables and pools, so they run side by side.
  it.concurrent.for(corpus)(
    'the bug "$bug" fails the test of [$clause], and the failure names that clause',
    { timeout: 120_000 },
    async (mutant, { expect }) => {
      const { clause } = mutant;
      const { tests, applied } = await run(expect, mutant, { clauses: [mutant.clause] });
      expect(tests.length).toBeGreaterThan(0);
      if (mutant.sql) expect(applied, 'the mutation never reached the server').toBeGreaterThan(0);
      const caught = tests.filter((test) => test.error && test.broken.length === 1 && test.broken[0] === clause);
      if (process.env.ONCELY_MUTANT_REPORT) console.log(`${mutant.bug}: ${caught[0]?.error?.message.split('\n')[0]}`);
      expect(caught.length, summary(tests)).toBeGreaterThan(0);
    },
  );

  it('covers at least 25 bugs, each its own', () => {
    expect(new Set(corpus.map((mutant) => mutant.bug)).size).toBe(corpus.length);
    expect(corpus.length).toBeGreaterThanOrEqual(25);
  });
});
