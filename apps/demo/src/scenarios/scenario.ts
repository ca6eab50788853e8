import type { SupervisedService } from '../supervisor/service-process.js';

/** What every scenario gets: the supervised service and fresh names for its data. */
export interface ScenarioContext {
  readonly service: SupervisedService;
  /** The flags the service normally runs with; a scenario that restarts it differently restores them. */
  readonly serviceArgs: readonly string[];
  /** A tenant no other scenario run used: its accounts start at 1000.00. */
  newTenant(label: string): string;
}

/** What a scenario observed; it passed when nothing it expected was missing. */
export interface ScenarioOutcome {
  /** HTTP attempts the clients made. */
  readonly attempts: number;
  /** The business state observed, in a few words. */
  readonly observed: string;
  /** Each expectation that did not hold. */
  readonly failures: readonly string[];
}

/** One failure boundary (a row of the scenario table in the demo's README), run through real HTTP against the service. */
export interface Scenario {
  readonly id: number;
  readonly title: string;
  /** The expected effect, as the table prints it. */
  readonly expected: string;
  /** What passing proves, for the README and the dashboard. */
  readonly proves: string;
  run(context: ScenarioContext): Promise<ScenarioOutcome>;
}

/** A scenario's row in the results table. */
export interface ScenarioResult {
  readonly id: number;
  readonly title: string;
  readonly attempts: number;
  readonly observed: string;
  readonly expected: string;
  readonly verdict: 'PASS' | 'FAIL';
  readonly failures: readonly string[];
  readonly durationMs: number;
}

/** Collects expectations as a scenario goes, so one run reports every broken one. */
export interface Expectations {
  expect(holds: boolean, description: string): void;
  outcome(attempts: number, observed: string): ScenarioOutcome;
}

/** Creates an empty {@link Expectations}. */
export function expectations(): Expectations {
  const failures: string[] = [];
  return {
    expect(holds, description) {
      if (!holds) failures.push(description);
    },
    outcome: (attempts, observed) => ({ attempts, observed, failures }),
  };
}
