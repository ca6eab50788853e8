import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (the CI installs it); no browser is ever downloaded. */
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--password-store=basic',
];

/** A Chromium process of our own, driven over CDP: its profile is a folder on disk, so it can be killed and started again. */
export interface RunningChromium {
  readonly context: BrowserContext;
  readonly profile: string;
  /** SIGKILL of the browser's process group: no shutdown, no flush. */
  kill(): Promise<void>;
  /** Closes the browser; `keepProfile` leaves the folder for a restart. */
  close(options?: { readonly keepProfile?: boolean }): Promise<void>;
}

/** Starts Chromium as a child process on a profile folder (a new one unless given) and connects to it. */
export async function startChromium(profile = mkdtempSync(join(tmpdir(), 'oncely-http-chromium-'))): Promise<RunningChromium> {
  // Its own process group, so a kill takes its renderers with it.
  const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, '--remote-debugging-port=0', 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = await devToolsEndpoint(child);
  const browser: Browser = await chromium.connectOverCDP(endpoint);
  const context = browser.contexts()[0]!;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  return {
    context,
    profile,
    async kill() {
      signalGroup('SIGKILL');
      await exited;
    },
    async close(options = {}) {
      await browser.close().catch(() => undefined);
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      if (!options.keepProfile) rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Opens the test page at `url` in a new tab, once its bundle has loaded. */
export async function openTestPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => window.oncely !== undefined);
  return page;
}

/** Reads `DevTools listening on ws://…` from Chromium's stderr. */
function devToolsEndpoint(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    const timer = setTimeout(() => reject(new Error(`Chromium did not start within 30 s:\n${lines.join('\n')}`)), 30_000);
    createInterface({ input: child.stderr! }).on('line', (line) => {
      lines.push(line);
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited while starting (${signal ?? code}):\n${lines.join('\n')}`));
    });
  });
}
