import { type Clock, type JournalOperation, StorageError, systemClock } from '@oncely/core';
import { assertValidOperationId, operationNotBegun, resolveBegin, resolveListUnresolved, resolveOutcome, resolvePurgeSettled, toStorageError } from '@oncely/core/adapter';
import type { JournalOutcome, OperationJournal } from '@oncely/core/journal';
import { isPurgeable, newEntry, unresolvedOf, withAttempt, withOutcome, withUnknown } from './entry-changes.js';
import { readStoredEntry, type StoredEntry, toEntry } from './stored-entry.js';

/** Options of {@link indexedDbJournal}. */
export interface IndexedDbJournalOptions {
  /** The IndexedDB database (default `oncely-journal`): one per origin is enough. */
  readonly database?: string;
  /** Time for `updatedAt`, staleness and purge age (default: the system clock). */
  readonly clock?: Pick<Clock, 'now'>;
  /** The IndexedDB factory (default `globalThis.indexedDB`). */
  readonly indexedDB?: IDBFactory;
}

/** The IndexedDB journal: an {@link OperationJournal} and the database it keeps entries in. */
export interface IndexedDbJournal extends OperationJournal {
  readonly database: string;
}

const ADAPTER = 'indexeddb';
const STORE = 'operations';
/** The schema version of the database; a database of a later version is refused, not downgraded. */
const SCHEMA_VERSION = 1;

/** A step of a transaction: runs `then` with the request's result, inside the same transaction. */
type Step = <R>(request: IDBRequest<R>, then: (result: R) => void) => void;

/**
 * A journal for browsers, kept in IndexedDB: entries survive reloads, tab crashes and browser restarts,
 * and every change is one read-and-write transaction, which IndexedDB runs one at a time across every
 * tab of the origin, so two tabs beginning the same operation get one key. Writes are committed with
 * `durability: 'strict'`: the key is on disk before the first attempt is sent.
 *
 * An entry that is corrupt or in another format throws `UnreadableJournalEntryError`
 * (a `StorageError` coded `corrupt_record`) and is left as it is; IndexedDB failures throw `StorageError`.
 */
export function indexedDbJournal(options: IndexedDbJournalOptions = {}): IndexedDbJournal {
  const database = options.database ?? 'oncely-journal';
  const clock = options.clock ?? systemClock;
  const factory = options.indexedDB ?? globalThis.indexedDB;
  let connection: Promise<IDBDatabase> | undefined;

  const connect = (): Promise<IDBDatabase> => {
    connection ??= open(factory, database).then(
      (db) => {
        // Another tab upgrading or deleting the database must not wait for this one: close, reopen on next use.
        db.onversionchange = () => {
          db.close();
          connection = undefined;
        };
        db.onclose = () => {
          connection = undefined;
        };
        return db;
      },
      (error: unknown) => {
        connection = undefined;
        throw error;
      },
    );
    return connection;
  };

  /** Runs `work` in one transaction and resolves with its result once the transaction has committed. */
  const transact = async <T>(
    operation: JournalOperation,
    mode: IDBTransactionMode,
    work: (store: IDBObjectStore, step: Step, finish: (result: T) => void) => void,
  ): Promise<T> => {
    let db: IDBDatabase;
    try {
      db = await connect();
    } catch (error) {
      throw toStorageError(ADAPTER, operation, error);
    }
    return new Promise<T>((resolve, reject) => {
      let failure: { error: unknown } | undefined;
      let result: T;
      let transaction: IDBTransaction;
      try {
        transaction = db.transaction(STORE, mode, { durability: mode === 'readwrite' ? 'strict' : 'default' });
      } catch (error) {
        reject(toStorageError(ADAPTER, operation, error));
        return;
      }
      const fail = (error: unknown) => {
        failure ??= { error };
        try {
          transaction.abort();
        } catch {
          // Already finishing: onabort or oncomplete still settles the promise.
        }
      };
      const step: Step = (request, then) => {
        request.onsuccess = () => {
          try {
            then(request.result);
          } catch (error) {
            fail(error);
          }
        };
      };
      transaction.oncomplete = () => (failure ? reject(toStorageError(ADAPTER, operation, failure.error)) : resolve(result));
      transaction.onabort = () => {
        const error = failure ? failure.error : (transaction.error ?? new Error('the transaction was aborted'));
        reject(toStorageError(ADAPTER, operation, error));
      };
      try {
        work(transaction.objectStore(STORE), step, (value) => {
          result = value;
        });
      } catch (error) {
        fail(error);
      }
    });
  };

  const read = (operation: JournalOperation, operationId: string, stored: unknown) =>
    readStoredEntry(ADAPTER, operation, operationId, stored);

  /** Reads, changes and writes one entry in one transaction; a final entry is returned unchanged. */
  const update = (operation: JournalOperation, operationId: string, change: (entry: StoredEntry, now: number) => StoredEntry | undefined) => {
    assertValidOperationId(operationId);
    return transact(operation, 'readwrite', (store, step, finish: (entry: ReturnType<typeof toEntry>) => void) => {
      step(store.get(operationId), (stored) => {
        if (stored === undefined) throw operationNotBegun(ADAPTER, operationId);
        const entry = read(operation, operationId, stored);
        const next = change(entry, clock.now());
        if (next === undefined) return finish(toEntry(entry));
        step(store.put(next), () => finish(toEntry(next)));
      });
    });
  };

  return {
    name: ADAPTER,
    database,
    async begin(operationId, beginOptions) {
      const { key, requestJson } = resolveBegin(operationId, beginOptions);
      return transact('journal.begin', 'readwrite', (store, step, finish) => {
        step(store.get(operationId), (stored) => {
          if (stored !== undefined) return finish({ kind: 'resumed', entry: toEntry(read('journal.begin', operationId, stored)) });
          const entry = newEntry(operationId, key, requestJson, clock.now());
          step(store.add(entry), () => finish({ kind: 'started', entry: toEntry(entry) }));
        });
      });
    },
    async get(operationId) {
      assertValidOperationId(operationId);
      return transact('journal.get', 'readonly', (store, step, finish) => {
        step(store.get(operationId), (stored) => finish(stored === undefined ? undefined : toEntry(read('journal.get', operationId, stored))));
      });
    },
    recordAttempt: (operationId) => update('journal.recordAttempt', operationId, withAttempt),
    async complete(operationId, outcome: JournalOutcome) {
      const resolved = resolveOutcome(outcome);
      return update('journal.complete', operationId, (entry, now) => withOutcome(entry, resolved, now));
    },
    markUnknown: (operationId, lastError) => update('journal.markUnknown', operationId, (entry, now) => withUnknown(entry, lastError, now)),
    async listUnresolved(listOptions) {
      const { staleAfterMs, limit } = resolveListUnresolved(listOptions);
      const staleBefore = clock.now() - staleAfterMs;
      return transact('journal.listUnresolved', 'readonly', (store, step, finish) => {
        step(store.getAll(), (records) => {
          // An unreadable entry fails the listing: it may be the very operation to reconcile.
          const entries = records.map((record) => read('journal.listUnresolved', String((record as { operationId?: unknown }).operationId), record));
          finish(unresolvedOf(entries, staleBefore, limit));
        });
      });
    },
    async purgeSettled(purgeOptions) {
      const { olderThanMs, limit } = resolvePurgeSettled(purgeOptions);
      const settledBefore = clock.now() - olderThanMs;
      return transact('journal.purgeSettled', 'readwrite', (store, step, finish: (count: number) => void) => {
        let count = 0;
        const visit = (cursor: IDBCursorWithValue | null) => {
          if (cursor === null || count >= limit) return finish(count);
          let entry: StoredEntry | undefined;
          try {
            entry = read('journal.purgeSettled', String(cursor.key), cursor.value);
          } catch {
            // Unreadable: nobody knows it settled, so it stays for inspection.
          }
          if (entry && isPurgeable(entry, settledBefore)) {
            count += 1;
            cursor.delete();
          }
          // Fires the cursor request's onsuccess (visit) again with the next entry.
          cursor.continue();
        };
        step(store.openCursor(), visit);
      });
    },
    async close() {
      const opened = connection;
      connection = undefined;
      if (opened) (await opened.catch(() => undefined))?.close();
    },
  };
}

/** Opens (creating on first use) the database; a later schema version is refused as a storage error. */
function open(factory: IDBFactory | undefined, database: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    if (!factory) {
      reject(new StorageError(ADAPTER, 'journal.open', 'IndexedDB is not available here (use localStorageJournal, or a server journal)'));
      return;
    }
    const request = factory.open(database, SCHEMA_VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { keyPath: 'operationId' });
    };
    request.onsuccess = () => resolve(request.result);
    // A VersionError here means a later oncely upgraded the schema: refused, never downgraded.
    request.onerror = () => reject(request.error ?? new Error(`cannot open ${database}`));
  });
}
