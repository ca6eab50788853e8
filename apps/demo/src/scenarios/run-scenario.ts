import type { Scenario, ScenarioContext, ScenarioResult } from './scenario.js';

/** Runs one scenario; an exception is a FAIL with its message, never a crash of the runner. */
export async function runScenario(scenario: Scenario, context: ScenarioContext): Promise<ScenarioResult> {
  const startedAt = Date.now();
  const row = { id: scenario.id, title: scenario.title, expected: scenario.expected };
  try {
    const outcome = await scenario.run(context);
    return {
      ...row,
      attempts: outcome.attempts,
      observed: outcome.observed,
      verdict: outcome.failures.length === 0 ? 'PASS' : 'FAIL',
      failures: outcome.failures,
      durationMs: Date.now() - startedAt,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ...row, attempts: 0, observed: 'error', verdict: 'FAIL', failures: [message], durationMs: Date.now() - startedAt };
  }
}
