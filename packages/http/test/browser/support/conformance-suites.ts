import { runJournalConformance, type TestRunner } from '@oncely/testkit';
import { type IndexedDbJournal, indexedDbJournal, type LocalStorageJournal, localStorageJournal } from '../../../src/browser.js';

let count = 0;
/** A database name or key prefix no other test of this page (or an earlier run) has used. */
export const uniqueName = (label: string) =>
  `oncely-test-${label}-${Date.now().toString(36)}-${++count}-${Math.random().toString(36).slice(2, 8)}`;

/** Deletes an IndexedDB database once every connection to it has closed. */
export function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
  });
}

/** Removes every localStorage item under `prefix`. */
export function clearPrefix(prefix: string): void {
  const names: string[] = [];
  for (let index = 0; index < localStorage.length; index++) {
    const name = localStorage.key(index);
    if (name?.startsWith(prefix)) names.push(name);
  }
  for (const name of names) localStorage.removeItem(name);
}

/**
 * The journal conformance suite against both browser journals, each test on storage of its own (a
 * database, a key prefix). Registered in the page, where the bodies run, and in Node, for the names.
 */
export function defineConformance(runner: TestRunner): void {
  runJournalConformance<IndexedDbJournal>(runner, {
    name: 'indexeddb journal',
    createJournal: () => indexedDbJournal({ database: uniqueName('idb') }),
    // A second connection to the same database: what the next page load opens.
    reopen: (journal) => indexedDbJournal({ database: journal.database }),
    closeJournal: async (journal) => {
      await journal.close();
      await deleteDatabase(journal.database);
    },
  });
  runJournalConformance<LocalStorageJournal>(runner, {
    name: 'localStorage journal',
    createJournal: () => localStorageJournal({ prefix: `${uniqueName('ls')}:` }),
    reopen: (journal) => localStorageJournal({ prefix: journal.prefix }),
    closeJournal: async (journal) => clearPrefix(journal.prefix),
  });
}
