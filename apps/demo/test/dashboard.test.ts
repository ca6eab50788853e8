import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/cli/package-root.js';
import { toServiceArgs } from '../src/cli/flags.js';
import { buildHostApp } from '../src/host/host-app.js';
import { exchange } from '../src/scenarios/api-client.js';
import { SCENARIOS } from '../src/scenarios/catalog.js';
import { scenarioContext } from '../src/scenarios/scenario-context.js';
import { type SupervisedService, superviseService } from '../src/supervisor/service-process.js';
import { openBrowser } from './support/browser.js';
import { serviceConfig, temporaryDataDir } from './support/scenario-suite.js';

const HOST_PORT = 7320;
const url = `http://127.0.0.1:${HOST_PORT}`;
const data = temporaryDataDir('dashboard');
const payment = { account_id: 'acc_2', amount: '25.00', currency: 'USD' };

describe('the dashboard (what npm run demo serves), driven by Chromium', () => {
  let service: SupervisedService | undefined;
  let host: FastifyInstance | undefined;
  let browser: Awaited<ReturnType<typeof openBrowser>> | undefined;
  let page: Page;

  beforeAll(async () => {
    const config = serviceConfig({ port: 7321, store: 'pglite', database: { kind: 'pglite', dataDir: data.path } });
    service = await superviseService({ args: toServiceArgs(config), firstStartFlags: ['--reset'] });
    host = await buildHostApp({ service, scenarios: scenarioContext(service), store: 'pglite', faults: false });
    await host.listen({ host: '127.0.0.1', port: HOST_PORT });
    browser = await openBrowser();
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await service?.stop();
    data.remove();
  });

  it('serves the API on the same URL: a retry through the proxy replays, with one charge', async () => {
    const request = { method: 'POST' as const, path: '/v1/payments', caller: 'acme:alice', key: 'dashboard-1', body: payment };
    const first = await exchange(url, request);
    const retry = await exchange(url, request);
    expect(first).toMatchObject({ kind: 'answered', status: 201 });
    expect(retry).toMatchObject({ kind: 'answered', status: 201, headers: { 'idempotent-replayed': 'true' } });
    const account = await exchange(url, { method: 'GET', path: '/v1/accounts/acc_2', caller: 'acme:alice' });
    expect(account).toMatchObject({ kind: 'answered', body: { id: 'acc_2', balance: '975.00', payments: 1 } });
  });

  it('refuses fault injection on the public URL unless the demo runs with --faults', async () => {
    const refused = await exchange(url, {
      method: 'POST',
      path: '/v1/payments',
      caller: 'acme:alice',
      key: 'dashboard-2',
      body: payment,
      fault: 'crash-before-commit',
    });
    expect(refused).toMatchObject({ kind: 'answered', status: 400 });
    expect(service?.restarts).toBe(0);
    const account = await exchange(url, { method: 'GET', path: '/v1/accounts/acc_2', caller: 'acme:alice' });
    expect(account).toMatchObject({ kind: 'answered', body: { payments: 1 } });
  });

  it('shows live counters, the request timeline and balances', async () => {
    await page.goto(url);
    await page.locator('#service[data-state="up"]').waitFor();
    await expect.poll(() => page.locator('[data-counter="replayed"] b').textContent()).toBe('1');
    await expect.poll(() => page.locator('#timeline tbody tr').count()).toBeGreaterThanOrEqual(2);
    await expect.poll(() => page.locator('#timeline td.outcome-replayed').count()).toBeGreaterThanOrEqual(1);
    await expect.poll(() => page.locator('#accounts tbody').textContent()).toContain('975.00');
  });

  it('runs every scenario from its button and shows PASS with the observed effects', async () => {
    for (const scenario of SCENARIOS) {
      const row = page.locator(`[data-scenario="${scenario.id}"]`);
      await row.locator('button').click();
      const badge = row.locator('.badge[data-result="PASS"], .badge[data-result="FAIL"]');
      await badge.waitFor({ timeout: 90_000 });
      const failures = await row.locator('.failure').allTextContents();
      expect(failures, `scenario ${scenario.id}`).toEqual([]);
      expect(await badge.getAttribute('data-result')).toBe('PASS');
      expect(await row.locator('.observed').textContent()).toMatch(/observed \(\d+ attempts\)/);
      // The storm of scenario 8 charged 120 clients once each in the process running then (9 restarts it).
      if (scenario.id === 8) {
        await expect.poll(async () => Number(await page.locator('[data-counter="executed"] b').textContent())).toBeGreaterThanOrEqual(120);
      }
    }
    // The crash scenarios killed the service; the supervisor brought it back each time.
    expect(service?.restarts).toBeGreaterThanOrEqual(3);
    await page.locator('#service[data-state="up"]').waitFor();
    // Nine scenarios, five of them restarting the service: more than the default 120 s on a loaded host.
  }, 240_000);

  it('colours the timeline by outcome: executed, replayed, rejected', async () => {
    const request = { method: 'POST' as const, path: '/v1/payments', caller: 'acme:alice', key: 'dashboard-3', body: payment };
    await exchange(url, request);
    await exchange(url, request);
    await exchange(url, { ...request, body: { ...payment, amount: '99.00' } });
    const outcomes = page.locator('#timeline tbody tr:nth-child(-n+3) td:last-child');
    await expect.poll(() => outcomes.allTextContents()).toEqual(['rejected', 'replayed', 'executed']);
  });

  it('saves a screenshot of the dashboard', async () => {
    const folder = join(packageRoot(), 'screenshots');
    mkdirSync(folder, { recursive: true });
    const path = join(folder, 'dashboard.tmp.png');
    await page.screenshot({ path, fullPage: true });
    expect(statSync(path).size).toBeGreaterThan(10_000);
  });
});
