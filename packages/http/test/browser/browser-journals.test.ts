import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../support/listen.js';
import { openTestPage, type RunningChromium, startChromium } from './support/chromium.js';
import { bundle, PAGE_ENTRY } from './support/page-bundle.js';
import { pageAssets, servePage } from './support/page-server.js';

/** A stored entry, valid in format 1, for `operationId`. */
const validEntry = (operationId: string) => ({
  format: 1,
  operationId,
  key: 'k-7f3a',
  attempts: 1,
  state: 'pending',
  requestJson: '{"method":"POST"}',
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
});

/** What every call on an unreadable entry answers; nobody knows it settled, so purge leaves it. */
const EVERY_CALL_REFUSED = {
  begin: 'corrupt_record',
  get: 'corrupt_record',
  recordAttempt: 'corrupt_record',
  complete: 'corrupt_record',
  markUnknown: 'corrupt_record',
  listUnresolved: 'corrupt_record',
  purgeSettled: 0,
};

/** Every journal method on `operationId`, each answering with its error code (or `resolved`). */
const callEveryMethod = async (page: Page, kind: 'indexeddb' | 'localstorage', where: string, operationId: string) =>
  page.evaluate(
    async ({ kind, where, operationId }) => {
      const { oncely, oncelyHelpers } = window;
      const journal = kind === 'indexeddb' ? oncely.indexedDbJournal({ database: where }) : oncely.localStorageJournal({ prefix: where });
      const codeOf = (call: Promise<unknown>) =>
        call.then(
          () => 'resolved',
          (error: unknown) => (oncelyHelpers.isOncelyError(error) ? error.code : String(error)),
        );
      const storedOf = (call: Promise<unknown>) => call.catch((error: { stored?: unknown }) => error.stored);
      const codes = {
        begin: await codeOf(journal.begin(operationId)),
        get: await codeOf(journal.get(operationId)),
        recordAttempt: await codeOf(journal.recordAttempt(operationId)),
        complete: await codeOf(journal.complete(operationId, { state: 'succeeded' })),
        markUnknown: await codeOf(journal.markUnknown(operationId, 'timeout')),
        listUnresolved: await codeOf(journal.listUnresolved({ staleAfterMs: 0 })),
        purgeSettled: await journal.purgeSettled({ olderThanMs: 0 }),
      };
      const stored = await storedOf(journal.begin(operationId));
      await journal.close();
      return { codes, stored };
    },
    { kind, where, operationId },
  );

describe('the browser journals in Chromium: unreadable entries, tabs, crashes', () => {
  let chromium: RunningChromium;
  let server: TestServer;
  let page: Page;

  const open = (target: RunningChromium = chromium) => openTestPage(target.context, server.url);

  beforeAll(async () => {
    server = await servePage(pageAssets((await bundle(PAGE_ENTRY)).text));
    chromium = await startChromium();
    page = await open();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  const unreadable = [
    ['written in another format (a later oncely)', (id: string) => ({ ...validEntry(id), format: 2 })],
    ['with no format at all (an older oncely)', (id: string) => ({ ...validEntry(id), format: undefined })],
    ['with a key that is not a valid idempotency key', (id: string) => ({ ...validEntry(id), key: 'has space' })],
    ['with a state no journal writes', (id: string) => ({ ...validEntry(id), state: 'charged' })],
    ['with request JSON that does not parse', (id: string) => ({ ...validEntry(id), requestJson: '{"method":' })],
    ['missing its times', (id: string) => ({ ...validEntry(id), createdAt: undefined, updatedAt: 'yesterday' })],
  ] as const;

  for (const [what, make] of unreadable) {
    it(`IndexedDB: an entry ${what} throws corrupt_record on every call and is kept as it is`, async () => {
      const database = await page.evaluate(() => window.oncelyHelpers.uniqueName('unreadable'));
      const operationId = 'cart-1:checkout';
      const record = JSON.parse(JSON.stringify(make(operationId)));
      // Creates the database, then writes the record with the raw IndexedDB API, as another version would.
      await page.evaluate(
        async ({ database, record }) => {
          const journal = window.oncely.indexedDbJournal({ database });
          await journal.get('warm-up');
          await journal.close();
          await window.oncelyHelpers.rawPut(database, record);
        },
        { database, record },
      );
      const { codes, stored } = await callEveryMethod(page, 'indexeddb', database, operationId);
      expect(codes).toEqual(EVERY_CALL_REFUSED);
      expect(stored).toEqual(record);
      const after = await page.evaluate(({ database, operationId }) => window.oncelyHelpers.rawGet(database, operationId), { database, operationId });
      expect(after).toEqual(record);
    });
  }

  it('localStorage: text that is not JSON, or an entry in another format, throws on every call and is kept byte for byte', async () => {
    const truncated = '{"format":1,"operationId":"cart-2:checkout","key":"k';
    for (const text of [truncated, JSON.stringify({ ...validEntry('cart-2:checkout'), format: 2 })]) {
      const prefix = await page.evaluate(() => `${window.oncelyHelpers.uniqueName('unreadable')}:`);
      await page.evaluate(({ name, text }) => localStorage.setItem(name, text), { name: `${prefix}cart-2:checkout`, text });
      const { codes, stored } = await callEveryMethod(page, 'localstorage', prefix, 'cart-2:checkout');
      expect(codes).toEqual(EVERY_CALL_REFUSED);
      expect(stored).toBe(text);
      expect(await page.evaluate((name) => localStorage.getItem(name), `${prefix}cart-2:checkout`)).toBe(text);
    }
  });

  it('a database a later oncely upgraded (schema version 2) is a storage error, and neither downgraded nor touched', async () => {
    const database = await page.evaluate(() => window.oncelyHelpers.uniqueName('schema'));
    const outcome = await page.evaluate(async (database) => {
      // What a later version would leave: schema 2, with its own store and data.
      await new Promise<void>((resolve, reject) => {
        const request = indexedDB.open(database, 2);
        request.onupgradeneeded = () => request.result.createObjectStore('operations-v2').put({ future: true }, 'cart-1:checkout');
        request.onsuccess = () => {
          request.result.close();
          resolve();
        };
        request.onerror = () => reject(request.error);
      });
      const journal = window.oncely.indexedDbJournal({ database });
      const code = await journal.begin('cart-1:checkout').then(
        () => 'resolved',
        (error: unknown) => (window.oncelyHelpers.isOncelyError(error) ? error.code : String(error)),
      );
      const after = await new Promise<{ version: number; stores: string[] }>((resolve) => {
        const request = indexedDB.open(database);
        request.onsuccess = () => {
          resolve({ version: request.result.version, stores: Array.from(request.result.objectStoreNames) });
          request.result.close();
        };
      });
      return { code, after };
    }, database);
    expect(outcome).toEqual({ code: 'storage_error', after: { version: 2, stores: ['operations-v2'] } });
  });

  it('two tabs beginning the same operations at the same moment agree on one key each time, and one of them starts it', async () => {
    const other = await open();
    try {
      const database = await page.evaluate(() => window.oncelyHelpers.uniqueName('tabs'));
      const begin = (tab: Page, operationId: string) =>
        tab.evaluate(
          async ({ database, operationId }) => {
            const journal = window.oncely.indexedDbJournal({ database });
            const { kind, entry } = await journal.begin(operationId);
            await journal.close();
            return { kind, key: entry.key };
          },
          { database, operationId },
        );
      for (let round = 0; round < 25; round++) {
        const [first, second] = await Promise.all([begin(page, `cart-${round}:checkout`), begin(other, `cart-${round}:checkout`)]);
        expect(first.key).toBe(second.key);
        expect([first.kind, second.kind].sort()).toEqual(['resumed', 'started']);
      }
    } finally {
      await other.close();
    }
  });

  it('a tab that crashes after recording an attempt: the next tab resumes with the same key and count', async () => {
    const doomed = await open();
    const database = await doomed.evaluate(() => window.oncelyHelpers.uniqueName('crash'));
    const key = await doomed.evaluate(async (database) => {
      const journal = window.oncely.indexedDbJournal({ database });
      const { entry } = await journal.begin('cart-9:checkout', { request: { amount: '30.50' } });
      await journal.recordAttempt('cart-9:checkout');
      return entry.key;
    }, database);
    const cdp = await chromium.context.newCDPSession(doomed);
    const crashed = doomed.waitForEvent('crash');
    // The renderer dies at once; the command itself never answers.
    void cdp.send('Page.crash').catch(() => undefined);
    await crashed;
    const next = await open();
    try {
      const resumed = await next.evaluate(async (database) => {
        const { kind, entry } = await window.oncely.indexedDbJournal({ database }).begin('cart-9:checkout');
        return { kind, key: entry.key, attempts: entry.attempts, state: entry.state, request: entry.request };
      }, database);
      expect(resumed).toEqual({ kind: 'resumed', key, attempts: 1, state: 'pending', request: { amount: '30.50' } });
    } finally {
      await next.close();
      await doomed.close().catch(() => undefined);
    }
  });

  it('Chromium SIGKILLed the moment begin resolved: started again on the same profile, every key is there', async () => {
    const victim = await startChromium();
    let restarted: RunningChromium | undefined;
    try {
      const tab = await open(victim);
      const database = await tab.evaluate(() => window.oncelyHelpers.uniqueName('sigkill'));
      const keys = await tab.evaluate(async (database) => {
        const journal = window.oncely.indexedDbJournal({ database });
        const begun: string[] = [];
        for (let index = 0; index < 5; index++) begun.push((await journal.begin(`cart-${index}:checkout`)).entry.key);
        return begun;
      }, database);
      // No close, no unload: the whole browser dies at once.
      await victim.kill();
      restarted = await startChromium(victim.profile);
      const reopened = await open(restarted);
      const found = await reopened.evaluate(async (database) => {
        const journal = window.oncely.indexedDbJournal({ database });
        const read: (string | undefined)[] = [];
        for (let index = 0; index < 5; index++) read.push((await journal.get(`cart-${index}:checkout`))?.key);
        return read;
      }, database);
      expect(found).toEqual(keys);
    } finally {
      await (restarted ?? victim).close();
    }
  });
});
