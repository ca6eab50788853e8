#!/usr/bin/env node
// @ts-check
// `npm run release:rehearse`: proves that the packages publish and work for a user, without
// publishing anything. On a scratch copy of the repository it runs `changeset version`, then
// `changeset publish` to a private Verdaccio on a loopback port; a fresh project outside the
// monorepo then installs the root README's install line from that registry and runs the README's
// "Use it" example, type-checked, as ESM and as CommonJS. Pass --keep to keep the temp folder.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publishedPackages } from '../packages/published-packages.mjs';
import { readReadmeExample, runExampleProject, writeExampleProject } from '../readme/readme-example.mjs';
import { scratchCopy } from './scratch-copy.mjs';
import { installVerdaccio, startRegistry, VERDACCIO_VERSION } from './verdaccio.mjs';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const keep = process.argv.includes('--keep');
const started = Date.now();
/** @type {[string, number][]} */
const steps = [];

/**
 * Runs one named step and records how long it took.
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
async function step(name, work) {
  const begun = Date.now();
  process.stdout.write(`rehearsal: ${name} …\n`);
  const result = await work();
  steps.push([name, Date.now() - begun]);
  return result;
}

/**
 * Runs a command, its output kept for the error when it fails.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd: string, env?: NodeJS.ProcessEnv }} options
 */
async function sh(command, args, options) {
  try {
    return (await exec(command, args, { ...options, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    const failed = /** @type {{ stdout?: string, stderr?: string }} */ (error);
    throw new Error(`${command} ${args.join(' ')} failed in ${options.cwd}:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
  }
}

/**
 * This process's environment without what `npm run` adds (`npm_config_*` names the repository's
 * prefix and the user's npmrc), plus `extra`: child npm commands read only the config given here.
 * @param {Record<string, string>} extra
 */
function npmEnv(extra) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_(config|package|lifecycle)_/i.test(name)));
  return { ...env, ...extra };
}

const dependencyVersion = (/** @type {string} */ name) => {
  const manifest = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8'));
  return manifest.version;
};
const example = readReadmeExample(join(root, 'README.md'));
const work = mkdtempSync(join(tmpdir(), 'oncely-rehearsal-'));
const scratch = join(work, 'repo');
const consumer = join(work, 'consumer');
/** @type {import('./verdaccio.mjs').LocalRegistry | undefined} */
let registry;

try {
  const packages = publishedPackages(root);
  await step('build every package (turbo)', () =>
    sh('npx', ['turbo', 'run', 'build', '--filter=./packages/*', '--output-logs=errors-only'], {
      cwd: root,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
    }),
  );
  await step('scratch copy of the repository', async () => scratchCopy(root, scratch, packages.map((pkg) => pkg.dir)));
  const changeset = join(root, 'node_modules', '@changesets', 'cli', 'bin.js');
  await step('changeset version', () => sh(process.execPath, [changeset, 'version'], { cwd: scratch }));
  const versioned = publishedPackages(scratch);
  for (const pkg of versioned) {
    const before = packages.find((other) => other.name === pkg.name)?.manifest.version;
    process.stdout.write(`  ${pkg.name} ${before} → ${pkg.manifest.version}\n`);
  }
  const versions = new Set(versioned.map((pkg) => pkg.manifest.version));
  if (versions.size !== 1) throw new Error(`the fixed group released different versions: ${[...versions].join(', ')}`);
  const [version] = versions;
  if (versioned.some((pkg) => pkg.manifest.version === packages.find((other) => other.name === pkg.name)?.manifest.version)) {
    throw new Error('changeset version bumped nothing: are there changesets in .changeset/?');
  }

  const verdaccio = await step(`install Verdaccio ${VERDACCIO_VERSION} (cached after the first run)`, installVerdaccio);
  const storage = join(work, 'registry');
  mkdirSync(storage);
  registry = await step('start Verdaccio on a loopback port', () => startRegistry(verdaccio.bin, storage));
  const { url, token } = registry;
  if (!url.startsWith('http://127.0.0.1:')) throw new Error(`refusing to publish to ${url}: not a loopback registry`);
  // The user's own npm config (and any token in it) is never read: this npmrc is the only one.
  const npmrc = join(work, 'publish.npmrc');
  writeFileSync(npmrc, `registry=${url}\n//${url.slice('http://'.length)}:_authToken=${token}\n`);
  const publishEnv = npmEnv({ npm_config_registry: url, npm_config_userconfig: npmrc });
  const published = await step('changeset publish to Verdaccio', () =>
    sh(process.execPath, [changeset, 'publish', '--no-git-tag'], { cwd: scratch, env: publishEnv }),
  );
  process.stdout.write(
    published
      .split('\n')
      .filter((line) => /published|success/i.test(line))
      .map((line) => `  ${line.trim()}\n`)
      .join(''),
  );
  await step('check each tarball on the registry', async () => {
    for (const pkg of versioned) {
      const files = await registryTarballFiles(url, pkg.name, /** @type {string} */ (version));
      const missing = ['package/LICENSE', 'package/README.md', 'package/package.json', 'package/dist/index.js', 'package/dist/index.cjs'].filter(
        (file) => !files.includes(file),
      );
      if (missing.length > 0) throw new Error(`${pkg.name}@${version} on the registry lacks ${missing.join(', ')}`);
      process.stdout.write(`  ${pkg.name}@${version}: ${files.length} files, LICENSE included\n`);
    }
  });

  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), `${JSON.stringify({ name: 'oncely-rehearsal-consumer', private: true }, null, 2)}\n`);
  // A user's project: @oncely/* from the local registry, everything else from the usual one.
  writeFileSync(join(consumer, '.npmrc'), `@oncely:registry=${url}\n`);
  const installEnv = npmEnv({ npm_config_userconfig: join(consumer, '.npmrc') });
  const flags = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];
  await step(`fresh project: npm install ${example.install.join(' ')} (the README's line)`, () =>
    sh('npm', ['install', ...example.install, ...flags], { cwd: consumer, env: installEnv }),
  );
  await step('fresh project: npm install -D typescript @types/node', () =>
    sh('npm', ['install', '-D', `typescript@${dependencyVersion('typescript')}`, `@types/node@${dependencyVersion('@types/node')}`, ...flags], {
      cwd: consumer,
      env: installEnv,
    }),
  );
  await step('check what the fresh project installed', async () => {
    const lock = JSON.parse(readFileSync(join(consumer, 'package-lock.json'), 'utf8'));
    const absent = example.install.filter((name) => !(`node_modules/${name}` in lock.packages));
    if (absent.length > 0) throw new Error(`the fresh project lacks ${absent.join(', ')}`);
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!path.startsWith('node_modules/@oncely/')) continue;
      const name = path.slice('node_modules/'.length);
      if (entry.version !== version || !String(entry.resolved).startsWith(url)) {
        throw new Error(`${name} came from ${entry.resolved} at ${entry.version}, not from ${url} at ${version}`);
      }
      process.stdout.write(`  ${name}@${entry.version} from ${entry.resolved}\n`);
    }
    // Peer dependencies unmet or invalid make `npm ls` fail.
    await sh('npm', ['ls', '--all'], { cwd: consumer, env: installEnv });
  });
  const outputs = await step("README's \"Use it\" example: tsc, then node as ESM and as CommonJS", async () => {
    writeExampleProject(consumer, example);
    return runExampleProject(consumer, join(consumer, 'node_modules', 'typescript', 'bin', 'tsc'));
  });
  for (const [format, lines] of Object.entries(outputs)) {
    process.stdout.write(lines.map((line) => `  ${format}: ${line}\n`).join(''));
    if (JSON.stringify(lines) !== JSON.stringify(example.expected)) {
      throw new Error(`the ${format} run printed\n${lines.join('\n')}\nbut the README says\n${example.expected.join('\n')}`);
    }
  }
  process.stdout.write(`rehearsal: passed for ${versioned.map((pkg) => pkg.name).join(', ')} at ${version}\n`);
} catch (error) {
  process.stderr.write(`rehearsal: FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await registry?.stop();
  for (const [name, ms] of steps) process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${name}\n`);
  process.stdout.write(`rehearsal: ${((Date.now() - started) / 1000).toFixed(1)} s in all\n`);
  if (keep || process.exitCode) process.stdout.write(`rehearsal: kept ${work}\n`);
  else if (existsSync(work)) rmSync(work, { recursive: true, force: true });
}

/**
 * The paths inside the tarball the registry serves for `name@version`.
 * @param {string} url
 * @param {string} name
 * @param {string} version
 */
async function registryTarballFiles(url, name, version) {
  const response = await fetch(`${url}${name.replace('/', '%2f')}`);
  if (!response.ok) throw new Error(`${name} is not on ${url}: ${response.status}`);
  const document = /** @type {{ versions: Record<string, { dist: { tarball: string } }> }} */ (await response.json());
  const tarball = document.versions[version]?.dist.tarball;
  if (!tarball) throw new Error(`${name}@${version} is not on ${url}`);
  const file = join(work, `${name.replace('/', '-')}-${version}.tgz`);
  writeFileSync(file, Buffer.from(await (await fetch(tarball)).arrayBuffer()));
  return (await sh('tar', ['-tzf', file], { cwd: work })).split('\n').filter(Boolean);
}
