import { concurrentDuplicates } from './boundaries/concurrent-duplicates.js';
import { consumerCrash } from './boundaries/consumer-crash.js';
import { crashBeforeCommit } from './boundaries/crash-before-commit.js';
import { dropResponse } from './boundaries/drop-response.js';
import { expiredRecord } from './boundaries/expired-record.js';
import { flowCompleted } from './boundaries/flow-completed.js';
import { keyReuse } from './boundaries/key-reuse.js';
import { relayCrash } from './boundaries/relay-crash.js';
import { retryStorm } from './boundaries/retry-storm.js';
import type { Scenario } from './scenario.js';

/** The eight failure boundaries, in the order of the scenario table in the demo's README, then the multi-step flow's. */
export const SCENARIOS: readonly Scenario[] = [
  crashBeforeCommit,
  dropResponse,
  concurrentDuplicates,
  keyReuse,
  relayCrash,
  consumerCrash,
  expiredRecord,
  retryStorm,
  flowCompleted,
];
