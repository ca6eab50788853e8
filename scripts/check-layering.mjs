#!/usr/bin/env node
// The layering of the monorepo, checked on every `npm test`:
// 1. @oncely/core's source imports no other package (only its own modules and node: builtins);
// 2. no file reaches into another package's folder by a relative path (its test/ or src/): packages
//    meet only through their names and `exports`;
// 3. a workspace package imports only workspace packages it declares in its package.json;
// 4. no cycles: not between workspace packages (dependencies of every kind), not between the
//    modules of any package's src/.
// It checks itself on small in-memory layouts first, so a check that stopped finding anything fails.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SOURCE = /\.(ts|tsx|mts|cts|mjs|cjs|js)$/;

/**
 * The import specifiers of a file: static and dynamic imports, re-exports, require().
 * @param {string} text
 */
function specifiers(text) {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

/**
 * The file a relative specifier names, trying the TypeScript spellings of `./x.js`.
 * @param {string} from
 * @param {string} specifier
 * @param {(file: string) => boolean} exists
 */
function resolveRelative(from, specifier, exists) {
  const base = normalize(join(dirname(from), specifier));
  const candidates = [base, base.replace(/\.(m|c)?js$/, '.$1ts'), `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')];
  return candidates.find(exists);
}

/**
 * Strongly connected components of more than one node (or a self-loop): the cycles of a graph.
 * @param {Map<string, string[]>} graph
 * @returns {string[][]}
 */
function cycles(graph) {
  let index = 0;
  /** @type {string[]} */
  const stack = [];
  /** @type {Map<string, { index: number, low: number, onStack: boolean }>} */
  const state = new Map();
  /** @type {string[][]} */
  const found = [];
  /** @param {string} node */
  const visit = (node) => {
    const own = { index, low: index, onStack: true };
    state.set(node, own);
    index += 1;
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!state.has(next)) {
        visit(next);
        own.low = Math.min(own.low, /** @type {{ low: number }} */ (state.get(next)).low);
      } else {
        const seen = /** @type {{ index: number, onStack: boolean }} */ (state.get(next));
        if (seen.onStack) own.low = Math.min(own.low, seen.index);
      }
    }
    if (own.low === own.index) {
      /** @type {string[]} */
      const component = [];
      /** @type {string} */
      let member;
      do {
        member = /** @type {string} */ (stack.pop());
        /** @type {{ onStack: boolean }} */ (state.get(member)).onStack = false;
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

/** @typedef {{ name: string, dependencies?: Record<string, string>, devDependencies?: Record<string, string>, peerDependencies?: Record<string, string>, optionalDependencies?: Record<string, string> }} Manifest */

/**
 * Every layering violation of a layout: `packages` maps a folder (`packages/core`) to its manifest,
 * `files` lists source files (repository-relative), `read` and `exists` reach them.
 * @param {{ packages: Map<string, Manifest>, files: string[], read: (file: string) => string, exists: (file: string) => boolean }} layout
 * @returns {string[]}
 */
export function findViolations({ packages, files, read, exists }) {
  /** @type {string[]} */
  const violations = [];
  const folders = [...packages.keys()].sort((a, b) => b.length - a.length);
  /** @param {string} file */
  const owner = (file) => folders.find((folder) => file.startsWith(`${folder}/`));
  const byName = new Map([...packages].map(([folder, manifest]) => [manifest.name, folder]));
  /** @param {Manifest} manifest */
  const declared = (manifest) => new Set(Object.keys({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies, ...manifest.optionalDependencies }));
  /** @type {Map<string, Map<string, string[]>>} */
  const moduleGraphs = new Map();

  for (const file of files) {
    const folder = owner(file);
    if (!folder) continue;
    const manifest = /** @type {Manifest} */ (packages.get(folder));
    const inSrc = file.startsWith(`${folder}/src/`);
    for (const specifier of specifiers(read(file))) {
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier, exists);
        const targetFolder = target ? owner(target) : owner(normalize(join(dirname(file), specifier)));
        if (targetFolder && targetFolder !== folder) {
          violations.push(`${file}: imports ${specifier}, inside ${targetFolder}; import the package by name instead`);
        } else if (target && inSrc && target.startsWith(`${folder}/src/`)) {
          if (!moduleGraphs.has(folder)) moduleGraphs.set(folder, new Map());
          const graph = /** @type {Map<string, string[]>} */ (moduleGraphs.get(folder));
          graph.set(file, [...(graph.get(file) ?? []), target]);
        }
        continue;
      }
      if (specifier.startsWith('node:')) continue;
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? specifier);
      if (manifest.name === '@oncely/core' && inSrc && name !== '@oncely/core') {
        violations.push(`${file}: @oncely/core imports ${specifier}; core imports no other package`);
      }
      if (byName.has(name) && name !== manifest.name && !declared(manifest).has(name)) {
        violations.push(`${file}: imports ${name}, which ${folder}/package.json does not declare`);
      }
    }
  }

  for (const [folder, graph] of moduleGraphs) {
    for (const cycle of cycles(graph)) violations.push(`import cycle in ${folder}/src: ${cycle.map((/** @type {string} */ file) => relative(folder, file)).join(' -> ')}`);
  }
  const packageGraph = new Map(
    [...packages.values()].map((manifest) => [manifest.name, [...declared(manifest)].filter((name) => byName.has(name) && name !== manifest.name)]),
  );
  for (const cycle of cycles(packageGraph)) violations.push(`dependency cycle between packages: ${cycle.join(' -> ')}`);
  return violations;
}

/** The check on small layouts: each must find exactly the violation it was built with. */
function selfCheck() {
  /**
   * @param {Record<string, string>} sources
   * @param {Record<string, Manifest>} [manifests]
   */
  const layout = (sources, manifests = {}) => {
    const packages = new Map([
      ['packages/core', { name: '@oncely/core' }],
      ['packages/redis', { name: '@oncely/redis', peerDependencies: { '@oncely/core': '0.x' } }],
      ...Object.entries(manifests),
    ]);
    return findViolations({ packages, files: Object.keys(sources), read: (file) => sources[file] ?? '', exists: (file) => file in sources });
  };
  const clean = { 'packages/core/src/a.ts': "import { b } from './b.js';", 'packages/core/src/b.ts': "import 'node:crypto';", 'packages/redis/src/x.ts': "import { a } from '@oncely/core/adapter';" };
  /** @type {[string, Record<string, string>, number][]} */
  const cases = [
    ['a clean layout', clean, 0],
    ['core importing another package', { ...clean, 'packages/core/src/b.ts': "import { hash } from 'ohash';" }, 1],
    ['a reach into another package\'s test folder', { ...clean, 'packages/redis/test/t.ts': "import { memoryOutbox } from '../../core/test/outbox/memory-outbox.js';", 'packages/core/test/outbox/memory-outbox.ts': '' }, 1],
    ['an undeclared workspace package', { ...clean, 'packages/core/test/t.ts': "import { redisStore } from '@oncely/redis';" }, 1],
    ['a module cycle', { ...clean, 'packages/core/src/b.ts': "export { a } from './a.js';" }, 1],
  ];
  for (const [what, sources, expected] of cases) {
    const found = layout(sources);
    if (found.length !== expected) throw new Error(`layering self-check: ${what} gave ${found.length} violations, expected ${expected}: ${found.join('; ')}`);
  }
  const packageCycle = layout(clean, { 'packages/testkit': { name: '@oncely/testkit', devDependencies: { '@oncely/redis': '*' } }, 'packages/x': { name: '@oncely/x' } });
  if (packageCycle.length !== 0) throw new Error(`layering self-check: no package cycle expected, got ${packageCycle.join('; ')}`);
  const cyclic = findViolations({
    packages: new Map([
      ['packages/a', { name: '@oncely/a', dependencies: { '@oncely/b': '*' } }],
      ['packages/b', { name: '@oncely/b', devDependencies: { '@oncely/a': '*' } }],
    ]),
    files: [],
    read: () => '',
    exists: () => false,
  });
  if (cyclic.length !== 1) throw new Error('layering self-check: a dependency cycle between packages went unnoticed');
}

function main() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'packages', 'apps', 'examples'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => SOURCE.test(file) && !file.includes('/dist/') && !file.includes('/node_modules/') && existsSync(join(root, file)));
  /** @type {Map<string, Manifest>} */
  const packages = new Map();
  for (const manifest of tracked.length ? execFileSync('git', ['ls-files', 'packages/*/package.json', 'apps/*/package.json', 'examples/*/package.json'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean) : []) {
    packages.set(dirname(manifest), JSON.parse(readFileSync(join(root, manifest), 'utf8')));
  }
  selfCheck();
  const violations = findViolations({
    packages,
    files: tracked,
    read: (file) => readFileSync(join(root, file), 'utf8'),
    exists: (file) => existsSync(join(root, file)) && SOURCE.test(file),
  });
  if (violations.length > 0) {
    console.error(`layering: ${violations.length} violation(s)\n${violations.map((violation) => `  ${violation}`).join('\n')}`);
    process.exit(1);
  }
  console.log(`layering: ${tracked.length} files in ${packages.size} packages; core imports no package, no reach into another package, no cycles`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
