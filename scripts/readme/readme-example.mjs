// @ts-check
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The root README's "Use it" example, exactly as written there.
 * @typedef {object} ReadmeExample
 * @property {string[]} install the packages of its `npm install` line
 * @property {string} code the TypeScript block
 * @property {string[]} imports the packages the block imports (`@oncely/http`, not `@oncely/http/fastify`)
 * @property {string[]} expected what the block prints: the `// …` comment after each `console.log(…);`
 */

/**
 * Reads the example from the section `## Use it` of `readmePath`: its first ```sh block (the install
 * line) and its first ```ts block. Throws, naming what is missing, when the README no longer has them.
 * @param {string} readmePath
 * @returns {ReadmeExample}
 */
export function readReadmeExample(readmePath) {
  const readme = readFileSync(readmePath, 'utf8');
  const start = readme.indexOf('\n## Use it\n');
  if (start < 0) throw new Error(`${readmePath} has no "## Use it" section`);
  const next = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, next < 0 ? undefined : next);
  const block = (/** @type {string} */ lang) => {
    const found = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(section)?.[1];
    if (found === undefined) throw new Error(`the "Use it" section of ${readmePath} has no \`\`\`${lang} block`);
    return found;
  };
  const installLine = block('sh').trim();
  if (!installLine.startsWith('npm install ')) throw new Error(`the "Use it" install block is not an npm install line: ${installLine}`);
  const code = block('ts');
  const imports = [...code.matchAll(/^import .* from '([^']+)';$/gm)].map((match) => packageOf(/** @type {string} */ (match[1])));
  const expected = [...code.matchAll(/^console\.log\(.*\); \/\/ (.+)$/gm)].map((match) => /** @type {string} */ (match[1]));
  return { install: installLine.slice('npm install '.length).split(/\s+/), code, imports: [...new Set(imports)], expected };
}

/** The package a module specifier names: `@scope/name` or `name`, without a subpath. */
function packageOf(/** @type {string} */ specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : /** @type {string} */ (parts[0]);
}

/**
 * The block as a CommonJS module: the same imports (TypeScript turns them into `require`s), and the
 * rest in an async function, since CommonJS has no top-level await.
 * @param {string} code
 */
export function asCommonJs(code) {
  const lines = code.trimEnd().split('\n');
  const firstStatement = lines.findIndex((line) => line.trim() !== '' && !line.startsWith('import '));
  const imports = lines.slice(0, firstStatement);
  const body = lines.slice(firstStatement);
  return [
    ...imports,
    'async function main(): Promise<void> {',
    ...body,
    '}',
    'main().catch((error: unknown) => {',
    '  console.error(error);',
    '  process.exitCode = 1;',
    '});',
    '',
  ].join('\n');
}

/**
 * Writes the example into `dir` as `example.mts` (ESM, as written) and `example.cts` (CommonJS), with
 * a strict `tsconfig.json` for Node's module resolution. `dir` must resolve the packages it imports.
 * @param {string} dir
 * @param {ReadmeExample} example
 */
export function writeExampleProject(dir, example) {
  writeFileSync(join(dir, 'example.mts'), example.code);
  writeFileSync(join(dir, 'example.cts'), asCommonJs(example.code));
  const compilerOptions = { target: 'es2022', module: 'nodenext', strict: true, skipLibCheck: true, types: ['node'], outDir: 'out' };
  writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify({ compilerOptions, files: ['example.mts', 'example.cts'] }, null, 2)}\n`);
}

/**
 * Type-checks and compiles the project `writeExampleProject` wrote with the TypeScript compiler at
 * `tscPath` (its type errors fail this), then runs `out/example.mjs` and `out/example.cjs` with Node,
 * side by side (each has its own in-memory database).
 * @param {string} dir
 * @param {string} tscPath
 * @returns {Promise<{ esm: string[], cjs: string[] }>} the lines each printed
 */
export async function runExampleProject(dir, tscPath) {
  await run(process.execPath, [tscPath, '-p', 'tsconfig.json'], { cwd: dir }).catch((error) => {
    throw new Error(`the README example does not type-check:\n${error.stdout}${error.stderr}`);
  });
  const output = async (/** @type {string} */ file) => {
    const { stdout } = await run(process.execPath, [join('out', file)], { cwd: dir, timeout: 60_000 }).catch((error) => {
      throw new Error(`node ${file} failed:\n${error.stdout}${error.stderr}`);
    });
    return stdout.trimEnd().split('\n');
  };
  const [esm, cjs] = await Promise.all([output('example.mjs'), output('example.cjs')]);
  return { esm, cjs };
}
