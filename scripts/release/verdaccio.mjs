// @ts-check
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** 6.10 wants Node 22; 6.8.0 runs on Node 20 once node-fetch is pinned to 2.7.0 (its 2.x range breaks the install). */
export const VERDACCIO_VERSION = '6.8.0';
const OVERRIDES = { 'node-fetch': '2.7.0' };

/**
 * Verdaccio is installed once per machine into `~/.cache/oncely` (or `$XDG_CACHE_HOME/oncely`), not
 * as a devDependency: its 327 packages would add about 60 MB and 20 s to every `npm ci`.
 * @returns {Promise<{ bin: string, installedMs: number }>} its CLI, and how long installing took (0 when cached)
 */
export async function installVerdaccio() {
  const home = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'oncely', `verdaccio-${VERDACCIO_VERSION}`);
  const bin = join(home, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  const manifest = join(home, 'node_modules', 'verdaccio', 'package.json');
  if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === VERDACCIO_VERSION) return { bin, installedMs: 0 };
  const started = Date.now();
  mkdirSync(dirname(home), { recursive: true });
  // Installed beside its final place and renamed into it, so two rehearsals never share a half-made install.
  const staging = mkdtempSync(`${home}.installing-`);
  const host = { name: 'oncely-verdaccio-host', private: true, dependencies: { verdaccio: VERDACCIO_VERSION }, overrides: OVERRIDES };
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify(host, null, 2)}\n`);
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: staging });
  rmSync(home, { recursive: true, force: true });
  renameSync(staging, home);
  return { bin, installedMs: Date.now() - started };
}

/** A free TCP port on the loopback interface. */
async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A private registry that only holds what is published to it: storage and config in `dir`, no uplinks
 * (nothing is proxied from another registry), listening on 127.0.0.1 only.
 * @typedef {object} LocalRegistry
 * @property {string} url e.g. `http://127.0.0.1:41234/`
 * @property {string} token an auth token of the user the registry was started with
 * @property {() => Promise<void>} stop ends the Verdaccio process this started
 */

/**
 * Starts Verdaccio (`bin` from {@link installVerdaccio}) and registers a user to publish with.
 * @param {string} bin
 * @param {string} dir an empty folder for its config, storage and users
 * @returns {Promise<LocalRegistry>}
 */
export async function startRegistry(bin, dir) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = [
    `storage: ${JSON.stringify(join(dir, 'storage'))}`,
    'auth:',
    '  htpasswd:',
    `    file: ${JSON.stringify(join(dir, 'htpasswd'))}`,
    'uplinks: {}',
    'packages:',
    "  '**':",
    '    access: $all',
    '    publish: $authenticated',
    `listen: 127.0.0.1:${port}`,
    'log: { type: stdout, format: pretty, level: warn }',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'config.yaml'), config);
  const child = spawn(process.execPath, [bin, '--config', join(dir, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (chunk) => (log += chunk));
  child.stderr.on('data', (chunk) => (log += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Should the rehearsal die before stop(), the registry goes with it.
  const orphaned = () => child.kill('SIGKILL');
  process.once('exit', orphaned);
  child.once('exit', () => process.off('exit', orphaned));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitUntilUp(url, child, () => log);
    return { url, token: await addUser(url), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * @param {string} url
 * @param {import('node:child_process').ChildProcess} child
 * @param {() => string} log
 */
async function waitUntilUp(url, child, log) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode}:\n${log()}`);
    const up = await fetch(`${url}-/ping`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) return;
    if (Date.now() > deadline) throw new Error(`verdaccio did not answer on ${url} within 30 s:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Registers a user the way `npm adduser` does, and answers its token. */
async function addUser(/** @type {string} */ url) {
  const name = 'rehearsal';
  const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password: 'rehearsal-only', type: 'user', roles: [], date: new Date().toISOString() }),
  });
  const body = /** @type {{ token?: string }} */ (await response.json());
  if (!response.ok || !body.token) throw new Error(`verdaccio refused to add a user: ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}
