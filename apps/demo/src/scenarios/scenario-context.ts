import type { SupervisedService } from '../supervisor/service-process.js';
import type { ScenarioContext } from './scenario.js';

/** A context over a supervised service; tenants are unique per run, so runs never share accounts. */
export function scenarioContext(service: SupervisedService): ScenarioContext {
  const run = Date.now().toString(36);
  let sequence = 0;
  const serviceArgs = [...service.args];
  return {
    service,
    serviceArgs,
    newTenant: (label) => `${label}-${run}-${++sequence}`,
  };
}
