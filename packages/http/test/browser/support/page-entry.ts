import { isOncelyError } from '@oncely/core';
import { retryPolicy } from '@oncely/core/retry';
import * as browserEntry from '../../../src/browser.js';
import { clearPrefix, defineConformance, deleteDatabase, uniqueName } from './conformance-suites.js';
import { type PageRunner, pageRunner } from './page-runner.js';

/** Runs one request on the journal's object store with the raw IndexedDB API, as another program would. */
function raw<T>(database: string, mode: IDBTransactionMode, call: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(database);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const transaction = open.result.transaction('operations', mode);
      const request = call(transaction.objectStore('operations'));
      transaction.oncomplete = () => {
        open.result.close();
        resolve(request.result);
      };
      transaction.onerror = () => reject(transaction.error);
    };
  });
}

/** What the test page puts on `window` for `page.evaluate`. */
const helpers = {
  retryPolicy,
  isOncelyError,
  uniqueName,
  deleteDatabase,
  clearPrefix,
  /** Writes a record as it is, past the journal. */
  rawPut: (database: string, record: unknown) => raw(database, 'readwrite', (store) => store.put(record)).then(() => undefined),
  /** Reads a record as it is stored. */
  rawGet: (database: string, operationId: string) => raw<unknown>(database, 'readonly', (store) => store.get(operationId)),
};

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
