import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../support/listen.js';
import { openTestPage, type RunningChromium, startChromium } from './support/chromium.js';
import { defineConformance } from './support/conformance-suites.js';
import { bundle, PAGE_ENTRY } from './support/page-bundle.js';
import { pageRunner } from './support/page-runner.js';
import { pageAssets, servePage } from './support/page-server.js';

// The names, collected in Node by registering the same suites: each test below runs its body in the page.
const registered = pageRunner();
defineConformance(registered);
const names = registered.names();

describe('runJournalConformance in Chromium, against the IndexedDB and localStorage journals', () => {
  let chromium: RunningChromium;
  let server: TestServer;
  let page: Page;

  beforeAll(async () => {
    server = await servePage(pageAssets((await bundle(PAGE_ENTRY)).text));
    chromium = await startChromium();
    page = await openTestPage(chromium.context, server.url);
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  it('the page registers every test Node collected, for both journals', async () => {
    expect(await page.evaluate(() => window.oncelyTests.names())).toEqual(names);
    expect(names.filter((name) => name.startsWith('indexeddb journal')).length).toBeGreaterThan(10);
    expect(names.filter((name) => name.startsWith('localStorage journal')).length).toBe(names.length / 2);
  });

  for (const name of names) {
    it(name, async () => {
      const result = await page.evaluate((test) => window.oncelyTests.run(test), name);
      if (!result.ok) throw new Error(`in Chromium: ${result.message}`);
    }, 60_000);
  }
});
