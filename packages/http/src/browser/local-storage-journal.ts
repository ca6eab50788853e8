import { type Clock, type JournalOperation, StorageError, systemClock } from '@oncely/core';
import { assertValidOperationId, operationNotBegun, resolveBegin, resolveListUnresolved, resolveOutcome, resolvePurgeSettled, toStorageError } from '@oncely/core/adapter';
import type { JournalEntry, JournalOutcome, OperationJournal } from '@oncely/core/journal';
import { isPurgeable, newEntry, unresolvedOf, withAttempt, withOutcome, withUnknown } from './entry-changes.js';
import { readStoredEntry, type StoredEntry, toEntry, UnreadableJournalEntryError } from './stored-entry.js';

/** Options of {@link localStorageJournal}. */
export interface LocalStorageJournalOptions {
  /** Prefix of the storage keys, one per entry (default `oncely-journal:`). */
  readonly prefix?: string;
  /** Time for `updatedAt`, staleness and purge age (default: the system clock). */
  readonly clock?: Pick<Clock, 'now'>;
  /** The storage (default `globalThis.localStorage`; `sessionStorage` works too, for one tab). */
  readonly storage?: Storage;
}

/** The localStorage journal: an {@link OperationJournal} and the key prefix it writes under. */
export interface LocalStorageJournal extends OperationJournal {
  readonly prefix: string;
}

const ADAPTER = 'localstorage';

/**
 * A fallback journal for browsers without IndexedDB, kept in `localStorage` (one JSON item per
 * entry). It survives reloads and tab crashes, and within one tab every call is atomic. It cannot
 * promise what IndexedDB does: browsers share `localStorage` between tabs without transactions (and
 * Chromium copies writes to other tabs asynchronously), so two tabs beginning one operation at the same
 * moment can draw two keys; writes reach disk lazily, so a browser crash or power loss right after
 * `begin` can lose the key; the origin's quota is about 5 MiB; and every call blocks the main thread.
 */
export function localStorageJournal(options: LocalStorageJournalOptions = {}): LocalStorageJournal {
  const prefix = options.prefix ?? 'oncely-journal:';
  const clock = options.clock ?? systemClock;
  const storage = () => {
    const found = options.storage ?? globalThis.localStorage;
    if (!found) throw new StorageError(ADAPTER, 'journal.open', 'localStorage is not available here');
    return found;
  };

  /** Runs a storage call, turning what the browser throws (quota, storage disabled) into `StorageError`. */
  const guarded = <T>(operation: JournalOperation, work: () => T): Promise<T> => {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(toStorageError(ADAPTER, operation, error));
    }
  };

  const load = (operation: JournalOperation, operationId: string): StoredEntry | undefined => {
    const text = storage().getItem(prefix + operationId);
    if (text === null) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UnreadableJournalEntryError(ADAPTER, operation, operationId, text, 'it is not JSON');
    }
    return readStoredEntry(ADAPTER, operation, operationId, parsed, text);
  };
  const save = (entry: StoredEntry) => storage().setItem(prefix + entry.operationId, JSON.stringify(entry));

  const update = (operation: JournalOperation, operationId: string, change: (entry: StoredEntry, now: number) => StoredEntry | undefined) =>
    guarded(operation, (): JournalEntry => {
      assertValidOperationId(operationId);
      const entry = load(operation, operationId);
      if (!entry) throw operationNotBegun(ADAPTER, operationId);
      const next = change(entry, clock.now());
      if (next) save(next);
      return toEntry(next ?? entry);
    });

  /** The operation ids stored under the prefix. */
  const ids = (): string[] => {
    const store = storage();
    const found: string[] = [];
    for (let index = 0; index < store.length; index++) {
      const name = store.key(index);
      if (name?.startsWith(prefix)) found.push(name.slice(prefix.length));
    }
    return found;
  };

  return {
    name: ADAPTER,
    prefix,
    begin: (operationId, beginOptions) =>
      guarded('journal.begin', () => {
        const { key, requestJson } = resolveBegin(operationId, beginOptions);
        const existing = load('journal.begin', operationId);
        if (existing) return { kind: 'resumed' as const, entry: toEntry(existing) };
        const entry = newEntry(operationId, key, requestJson, clock.now());
        save(entry);
        return { kind: 'started' as const, entry: toEntry(entry) };
      }),
    get: (operationId) =>
      guarded('journal.get', () => {
        assertValidOperationId(operationId);
        const entry = load('journal.get', operationId);
        return entry && toEntry(entry);
      }),
    recordAttempt: (operationId) => update('journal.recordAttempt', operationId, withAttempt),
    complete(operationId, outcome: JournalOutcome) {
      return guarded('journal.complete', () => resolveOutcome(outcome)).then((resolved) =>
        update('journal.complete', operationId, (entry, now) => withOutcome(entry, resolved, now)),
      );
    },
    markUnknown: (operationId, lastError) => update('journal.markUnknown', operationId, (entry, now) => withUnknown(entry, lastError, now)),
    listUnresolved: (listOptions) =>
      guarded('journal.listUnresolved', () => {
        const { staleAfterMs, limit } = resolveListUnresolved(listOptions);
        const staleBefore = clock.now() - staleAfterMs;
        // An unreadable entry fails the listing: it may be the very operation to reconcile.
        return unresolvedOf(
          ids().map((operationId) => load('journal.listUnresolved', operationId)!),
          staleBefore,
          limit,
        );
      }),
    purgeSettled: (purgeOptions) =>
      guarded('journal.purgeSettled', () => {
        const { olderThanMs, limit } = resolvePurgeSettled(purgeOptions);
        const settledBefore = clock.now() - olderThanMs;
        let count = 0;
        for (const operationId of ids()) {
          if (count >= limit) break;
          let entry: StoredEntry | undefined;
          try {
            entry = load('journal.purgeSettled', operationId);
          } catch {
            // Unreadable: nobody knows it settled, so it stays for inspection.
          }
          if (entry && isPurgeable(entry, settledBefore)) {
            storage().removeItem(prefix + operationId);
            count += 1;
          }
        }
        return count;
      }),
    async close() {},
  };
}
