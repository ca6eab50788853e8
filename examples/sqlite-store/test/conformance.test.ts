import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runStoreConformance } from '@oncely/testkit';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';

// One database file for the whole suite: every test uses fresh keys, and each store is a connection
// of its own to the file, as in an application with several processes.
const dir = mkdtempSync(join(tmpdir(), 'oncely-sqlite-'));
const filename = join(dir, 'oncely.db');
// A second connection reads the raw rows behind the store's back, to prove what reached the file.
const raw = new Database(filename);
afterAll(() => {
  raw.close();
  rmSync(dir, { recursive: true, force: true });
});

runStoreConformance({ describe, it, expect }, {
  name: 'sqlite',
  createStore: () => sqliteStore({ filename }),
  inspect: async (store, scope) =>
    raw
      .prepare<[object], { state: string }>(
        `SELECT state FROM ${store.table}
         WHERE tenant = @tenant AND principal = @principal AND operation = @operation AND idempotency_key = @key`,
      )
      .get(scope),
});
