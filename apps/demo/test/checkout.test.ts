import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutOperationId } from '../src/checkout/cart.js';
import { toServiceArgs } from '../src/cli/flags.js';
import { packageRoot } from '../src/cli/package-root.js';
import { buildHostApp } from '../src/host/host-app.js';
import { exchange } from '../src/scenarios/api-client.js';
import { scenarioContext } from '../src/scenarios/scenario-context.js';
import { type SupervisedService, superviseService } from '../src/supervisor/service-process.js';
import { openBrowser } from './support/browser.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { serviceConfig, temporaryDataDir } from './support/scenario-suite.js';

// Fixed ports, new to this suite: the host, the service behind it, and the proxy Chromium talks to.
const HOST_PORT = 7330;
const SERVICE_PORT = 7331;
const PROXY_PORT = 7332;
const hostUrl = `http://127.0.0.1:${HOST_PORT}`;
const data = temporaryDataDir('checkout');
const JOURNAL_DATABASE = 'oncely-demo-checkout';

/** A new shopper and cart per test: the tenant's accounts start at 1000.00. */
let shoppers = 0;
const shopper = () => {
  shoppers += 1;
  const run = Date.now().toString(36);
  return { tenant: `shop${run}${shoppers}`, cart: `c${run}${shoppers}` };
};

/** acc_3 of a tenant, read from the service itself. */
async function account(tenant: string): Promise<{ balance: string; payments: number }> {
  const answer = await exchange(hostUrl, { method: 'GET', path: '/v1/accounts/acc_3', caller: `${tenant}:shopper` });
  if (answer.kind !== 'answered' || answer.status !== 200) throw new Error(`cannot read acc_3 of ${tenant}: ${JSON.stringify(answer)}`);
  return answer.body as { balance: string; payments: number };
}

/** The journal entry of a cart's checkout, read from the page's IndexedDB. */
function journalEntry(page: Page, cart: string): Promise<{ key: string; state: string; attempts: number; format: number } | undefined> {
  return page.evaluate(
    ({ database, operationId }) =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open(database);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('operations').objectStore('operations').get(operationId);
          get.onsuccess = () => {
            open.result.close();
            resolve(get.result);
          };
        };
      }),
    { database: JOURNAL_DATABASE, operationId: checkoutOperationId(cart) },
  );
}

/** The key field as the page sends it (the IETF profile's structured-field string). */
const sent = (key: string) => `"${key}"`;

describe('/checkout in Chromium: one cart, one payment, one key', () => {
  let service: SupervisedService | undefined;
  let host: FastifyInstance | undefined;
  let proxy: FaultProxy | undefined;
  let browser: Awaited<ReturnType<typeof openBrowser>> | undefined;
  let context: BrowserContext;

  beforeAll(async () => {
    const config = serviceConfig({ port: SERVICE_PORT, store: 'pglite', database: { kind: 'pglite', dataDir: data.path } });
    service = await superviseService({ args: toServiceArgs(config), firstStartFlags: ['--reset'] });
    host = await buildHostApp({ service, scenarios: scenarioContext(service), store: 'pglite', faults: false });
    await host.listen({ host: '127.0.0.1', port: HOST_PORT });
    proxy = await startFaultProxy(hostUrl, PROXY_PORT);
    browser = await openBrowser();
    context = browser.context;
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await host?.close();
    await service?.stop();
    data.remove();
  });

  /** Opens the checkout of a cart through the proxy and waits until it shows where the payment stands. */
  const openCheckout = async (who: { tenant: string; cart: string }, page?: Page) => {
    const tab = page ?? (await context.newPage());
    await tab.goto(`${proxy!.url}/checkout?cart=${who.cart}&tenant=${who.tenant}`);
    await tab.locator('body[data-ready="true"]').waitFor();
    return tab;
  };
  const paymentsOf = (key: string) => proxy!.payments.filter((payment) => payment.key === sent(key));

  it('the answer to Pay is dropped and the shopper reloads: the page resumes under the same key and shows paid; one charge', async () => {
    const who = shopper();
    const page = await openCheckout(who);
    const first = proxy!.payments.length;
    // The first answer is lost after the charge; after that the network is down until the reload.
    proxy!.fate = (index) => (index === first ? 'drop-answer' : 'refuse');
    await page.locator('#action[data-action="start"]').click();
    await page.locator('#status[data-state="working"]').waitFor();
    await expect.poll(() => proxy!.payments[first]?.status).toBe(201);
    expect(await account(who.tenant)).toEqual({ id: 'acc_3', balance: '969.50', payments: 1 });
    const reloadedAt = Date.now();
    await page.reload({ waitUntil: 'commit' });
    proxy!.fate = () => 'forward';
    await page.locator('body[data-ready="true"]').waitFor();
    await page.locator('#status[data-state="succeeded"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('#message').textContent()).toBe('Paid');
    const entry = await journalEntry(page, who.cart);
    expect(entry).toMatchObject({ state: 'succeeded', format: 1 });
    expect(await page.locator('#key').textContent()).toBe(entry!.key);
    // Every request carried the journal's key; the reloaded page's own request got the replay.
    const requests = paymentsOf(entry!.key);
    expect(requests.length).toBe(proxy!.payments.length - first);
    expect(requests.some((payment) => payment.at > reloadedAt && payment.fate === 'forward' && payment.status === 201 && payment.replayed)).toBe(true);
    expect(await page.locator('#detail').textContent()).toMatch(/^Payment pay_/);
    expect(await account(who.tenant)).toEqual({ id: 'acc_3', balance: '969.50', payments: 1 });
    await page.close();
  });

  it('reloaded while the request is still on its way: the page resumes it, the late original is replayed; one charge', async () => {
    const who = shopper();
    const page = await openCheckout(who);
    const first = proxy!.payments.length;
    // The first request reaches the service 1.5 s late, after the reloaded page has asked again.
    proxy!.fate = (index) => (index === first ? { delayMs: 1_500 } : 'forward');
    await page.locator('#action[data-action="start"]').click();
    await expect.poll(() => proxy!.payments.length).toBe(first + 1);
    await page.reload();
    await page.locator('#status[data-state="succeeded"]').waitFor({ timeout: 20_000 });
    await proxy!.settled();
    const entry = await journalEntry(page, who.cart);
    const requests = paymentsOf(entry!.key);
    expect(requests.length).toBe(proxy!.payments.length - first);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(requests.every((payment) => payment.status === 201)).toBe(true);
    // One request executed the charge; the late original found it done.
    expect(requests.filter((payment) => !payment.replayed).length).toBe(1);
    expect(requests[0]!.replayed).toBe(true);
    expect(await account(who.tenant)).toEqual({ id: 'acc_3', balance: '969.50', payments: 1 });
    await page.close();
  });

  it('two tabs press Pay for the same cart: one tab sends, the other waits and shows the same payment; one request, one charge', async () => {
    const who = shopper();
    const [left, right] = [await openCheckout(who), await openCheckout(who)];
    const first = proxy!.payments.length;
    // Slow enough that the second click lands while the first tab holds the operation.
    proxy!.fate = (index) => (index === first ? { delayMs: 700 } : 'forward');
    await Promise.all([left.locator('#action').click(), right.locator('#action').click()]);
    for (const tab of [left, right]) await tab.locator('#status[data-state="succeeded"]').waitFor({ timeout: 20_000 });
    await proxy!.settled();
    expect(proxy!.payments.length - first).toBe(1);
    expect(await left.locator('#detail').textContent()).toBe(await right.locator('#detail').textContent());
    expect(await left.locator('#key').textContent()).toBe(await right.locator('#key').textContent());
    expect(await account(who.tenant)).toEqual({ id: 'acc_3', balance: '969.50', payments: 1 });
    await left.close();
    await right.close();
  });

  it('the service is down past the deadline: the page says it is checking, and a later reconcile shows paid; one charge', async () => {
    const who = shopper();
    const page = await openCheckout(who);
    proxy!.fate = () => 'forward';
    const first = proxy!.payments.length;
    await service!.stop();
    try {
      await page.locator('#action[data-action="start"]').click();
      await page.locator('#status[data-state="working"]').waitFor();
      // The page's deadline is 8 s: the host answers 503 (service restarting) all that time.
      await page.locator('#status[data-state="unknown"]').waitFor({ timeout: 20_000 });
    } finally {
      await service!.restart();
    }
    expect(await page.locator('#message').textContent()).toBe('We are checking whether your payment went through');
    const folder = join(packageRoot(), 'screenshots');
    mkdirSync(folder, { recursive: true });
    await page.locator('.panel').screenshot({ path: join(folder, 'checkout-unknown.tmp.png') });
    expect(statSync(join(folder, 'checkout-unknown.tmp.png')).size).toBeGreaterThan(5_000);
    expect(await page.locator('#action').textContent()).toBe('Check again');
    expect(await page.locator('#action[data-action="start"]').count()).toBe(0);
    const key = await page.locator('#key').textContent();
    expect(proxy!.payments.slice(first).every((payment) => payment.status === 503 && payment.key === sent(key!))).toBe(true);
    expect(await account(who.tenant)).toEqual({ id: 'acc_3', balance: '1000.00', payments: 0 });
    await page.locator('#action[data-action="reconcile"]').click();
    await page.locator('#status[data-state="succeeded"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('#key').textContent()).toBe(key);
    expect(proxy!.payments.slice(first).every((payment) => payment.key === sent(key!))).toBe(true);
    expect(await account(who.tenant)).toEqual({ id: 'acc_3', balance: '969.50', payments: 1 });
    await page.close();
  });

  it('a journal entry that is corrupt or from another version: the page says it cannot read it, keeps it, and sends nothing', async () => {
    for (const damage of [{ format: 2 }, { key: 'not a key' }]) {
      const who = shopper();
      const page = await openCheckout(who);
      const operationId = checkoutOperationId(who.cart);
      const record = { format: 1, operationId, key: 'k-1', attempts: 1, state: 'pending', createdAt: 1, updatedAt: 1, ...damage };
      await page.evaluate(
        ({ database, record }) =>
          new Promise<void>((resolve, reject) => {
            const open = indexedDB.open(database);
            open.onsuccess = () => {
              const transaction = open.result.transaction('operations', 'readwrite');
              transaction.objectStore('operations').put(record);
              transaction.oncomplete = () => {
                open.result.close();
                resolve();
              };
              transaction.onerror = () => reject(transaction.error);
            };
          }),
        { database: JOURNAL_DATABASE, record },
      );
      const before = proxy!.payments.length;
      await page.reload();
      await page.locator('#status[data-state="unreadable"]').waitFor();
      expect(await page.locator('#detail').textContent()).toContain('corrupt_record');
      expect(await page.locator('#action').isVisible()).toBe(false);
      expect(await journalEntry(page, who.cart)).toEqual(record);
      expect(proxy!.payments.length).toBe(before);
      expect(await account(who.tenant)).toEqual({ id: 'acc_3', balance: '1000.00', payments: 0 });
      await page.close();
    }
  });
});
