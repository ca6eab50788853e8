import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ServiceConfig } from '../../src/cli/service-config.js';
import { toServiceArgs } from '../../src/cli/flags.js';
import { runScenario } from '../../src/scenarios/run-scenario.js';
import { SCENARIOS } from '../../src/scenarios/catalog.js';
import { scenarioContext } from '../../src/scenarios/scenario-context.js';
import type { ScenarioContext } from '../../src/scenarios/scenario.js';
import { type SupervisedService, superviseService } from '../../src/supervisor/service-process.js';

/** Defaults shared by the suites; each overrides where its data lives. */
export function serviceConfig(overrides: Partial<ServiceConfig> & Pick<ServiceConfig, 'port' | 'store' | 'database'>): ServiceConfig {
  return {
    host: '127.0.0.1',
    records: { kind: 'database' },
    faults: true,
    reset: false,
    leaseMs: 30_000,
    retentionMs: 86_400_000,
    relayLeaseMs: 2_000,
    ...overrides,
  };
}

/** A temporary PGlite folder, copied from the run's template, removed after the suite. */
export function temporaryDataDir(label: string): { readonly path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `oncely-demo-${label}-`));
  cpSync(inject('pgliteTemplate'), path, { recursive: true });
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Runs every scenario against a service started as a child process (reset first),
 * one test per scenario, each failing with the expectations that did not hold.
 */
export function describeScenarios(
  name: string,
  config: () => ServiceConfig,
  options: { readonly only?: readonly number[]; readonly cleanup?: () => void | Promise<void> } = {},
): void {
  describe(name, () => {
    let service: SupervisedService | undefined;
    let context: ScenarioContext;

    beforeAll(async () => {
      service = await superviseService({
        args: toServiceArgs(config()),
        firstStartFlags: ['--reset'],
        log: (line, stream) => {
          if (stream === 'stderr') console.log(`[service] ${line}`);
        },
      });
      context = scenarioContext(service);
    });

    afterAll(async () => {
      await service?.stop();
      await options.cleanup?.();
    });

    for (const scenario of SCENARIOS.filter((candidate) => options.only?.includes(candidate.id) ?? true)) {
      it(`${scenario.id}. ${scenario.title}: ${scenario.expected}`, async () => {
        const result = await runScenario(scenario, context);
        expect(result.failures, `observed: ${result.observed}`).toEqual([]);
        expect(result.verdict).toBe('PASS');
      });
    }
  });
}
