import { isOncelyError, retryPolicy } from '@oncely/core';
import * as browserEntry from '../../../src/browser.js';
import { clearPrefix, defineConformance, deleteDatabase, uniqueName } from './conformance-suites.js';
import { type PageRunner, pageRunner } from './page-runner.js';

/** What the test page puts on `window` for `page.evaluate`. */
const helpers = { retryPolicy, isOncelyError, uniqueName, deleteDatabase, clearPrefix };

declare global {
  interface Window {
    /** `@oncely/http/browser`, as the page bundled it. */
    oncely: typeof browserEntry;
    oncelyHelpers: typeof helpers;
    oncelyTests: PageRunner;
  }
}

const runner = pageRunner();
defineConformance(runner);
window.oncely = browserEntry;
window.oncelyHelpers = helpers;
window.oncelyTests = runner;
