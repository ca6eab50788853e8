import { type MemoryFlowTx, type MemoryStore, manualClock } from '@oncely/core';
import { describe, expect, it } from 'vitest';
import { type RecordedTest, recordSuite, runFlowConformance, type TestRunner } from '../../src/index.js';
import { memoryFlowOptions } from '../memory-flow-options.js';

/** Single-bug flow stores: the memory store with one clause broken, and the clause whose test must catch it. */
const bugs = {
  /** openFlow answers an intruder as if it held the lease. */
  'open-ignores-token': [
    'flow.open.fenced',
    (store: MemoryStore): Partial<MemoryStore> => ({
      openFlow: async (input) => {
        const state = await store.openFlow(input);
        return state === 'fence_lost' ? { request: input.request, phases: [] } : state;
      },
    }),
  ],
  /** A resumed flow starts over: the recovery points are forgotten. */
  'resume-forgets-phases': [
    'flow.open.resume',
    (store: MemoryStore): Partial<MemoryStore> => ({
      openFlow: async (input) => {
        const state = await store.openFlow(input);
        return state === 'fence_lost' ? state : { ...state, phases: [] };
      },
    }),
  ],
  /** A fenced owner's work still runs (against a transaction that never commits). */
  'fenced-work-runs': [
    'flow.advance.fenced',
    (store: MemoryStore): Partial<MemoryStore> => ({
      advance: async (input, work) => {
        const result = await store.advance(input, work);
        if (result.kind === 'fence_lost') await work({ onCommit: () => undefined });
        return result;
      },
    }),
  ],
  /** The position is not checked: every advance appends. */
  'position-ignored': [
    'flow.advance.position',
    (store: MemoryStore): Partial<MemoryStore> => ({
      advance: async (input, work) => {
        const state = await store.openFlow({ scope: input.scope, token: input.token, request: 'null' });
        return store.advance({ ...input, position: state === 'fence_lost' ? input.position : state.phases.length }, work);
      },
    }),
  ],
  /** The phase's writes land even when its work throws. */
  'rollback-keeps-writes': [
    'flow.advance.rollback',
    (store: MemoryStore): Partial<MemoryStore> => ({
      advance: (input, work) =>
        store.advance(input, async () => {
          const writes: (() => void)[] = [];
          try {
            return await work({ onCommit: (write) => void writes.push(write) });
          } finally {
            for (const write of writes) write();
          }
        }),
    }),
  ],
} as const;
type Bug = keyof typeof bugs;

function run(bug: Bug | undefined, clauses?: readonly string[]): Promise<RecordedTest[]> {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const wrap = (inner: MemoryStore): MemoryStore => (bug ? Object.assign(Object.create(inner), inner, bugs[bug][1](inner)) : inner);
  return recordSuite(
    expect as TestRunner['expect'],
    (runner) => runFlowConformance<MemoryStore, MemoryFlowTx>(runner, memoryFlowOptions(bug ?? 'correct', clock, wrap)),
    clauses ? { filter: (test) => test.clauses.some((clause) => clauses.includes(clause)) } : {},
  );
}

const failures = (tests: readonly RecordedTest[]) => tests.filter((test) => test.error).map((test) => `${test.name}: ${test.error?.message.split('\n')[0]}`);

describe('the flow suite against single-bug flow stores (memory)', () => {
  it('passes the memory store without a bug', async () => {
    const tests = await run(undefined);
    expect(tests.length).toBeGreaterThanOrEqual(11);
    expect(failures(tests)).toEqual([]);
  });

  it.each(Object.entries(bugs).map(([bug, [clause]]) => [bug, clause] as const))('the bug %s fails the test of [%s], and the failure names that clause', async (bug, clause) => {
    const tests = await run(bug as Bug, [clause]);
    const caught = tests.filter((test) => test.error && test.broken.length === 1 && test.broken[0] === clause);
    expect(caught.length, failures(tests).join('\n')).toBeGreaterThan(0);
  });
});
