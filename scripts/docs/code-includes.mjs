// @ts-check
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A code block of a Markdown page that says which file it shows: the line before its fence is
 * `<!-- source: path/to/file.ts -->` (the whole file) or `<!-- source: path/to/file.ts#name -->`
 * (the lines between `// #region name` and `// #endregion name` in that file).
 * @typedef {object} IncludedBlock
 * @property {string} file the file it shows, relative to the repository root
 * @property {string | undefined} region the region it shows, or undefined for the whole file
 * @property {string} lang the fence's language (`ts`, `sh`…), or ''
 * @property {string} code the block's text, without its fences
 * @property {number} line the line of its marker in the page (1-based)
 */

const MARKER = /^<!-- source: ([^#\s]+)(?:#([\w-]+))? -->$/;
const FENCE = /^```(\S*)/;

/**
 * Every code block of `markdown`, marked or not: marked ones name their file (and region).
 * @param {string} markdown
 * @returns {{ blocks: IncludedBlock[], unmarked: { line: number, lang: string, code: string }[] }}
 */
export function codeBlocks(markdown) {
  const lines = markdown.split('\n');
  /** @type {IncludedBlock[]} */
  const blocks = [];
  /** @type {{ line: number, lang: string, code: string }[]} */
  const unmarked = [];
  for (let index = 0; index < lines.length; index++) {
    const lang = FENCE.exec(lines[index] ?? '')?.[1];
    if (lang === undefined) continue;
    const end = lines.findIndex((line, at) => at > index && FENCE.test(line));
    if (end === -1) throw new Error(`line ${index + 1}: a code block that never ends`);
    const code = lines.slice(index + 1, end).join('\n');
    const marker = MARKER.exec(lines[index - 1] ?? '');
    if (marker) blocks.push({ file: /** @type {string} */ (marker[1]), region: marker[2], lang, code, line: index });
    else unmarked.push({ line: index + 1, lang, code });
    index = end;
  }
  return { blocks, unmarked };
}

/**
 * The regions of a source file by name: the lines between `// #region name` and `// #endregion
 * name`, without their common indentation.
 * @param {string} text
 * @returns {Map<string, string>}
 */
export function regions(text) {
  /** @type {Map<string, string>} */
  const found = new Map();
  const lines = text.split('\n');
  lines.forEach((line, start) => {
    const name = /^\s*\/\/ #region ([\w-]+)$/.exec(line)?.[1];
    if (!name) return;
    const end = lines.findIndex((other, at) => at > start && new RegExp(`^\\s*// #endregion ${name}$`).test(other));
    if (end === -1) throw new Error(`region ${name} (line ${start + 1}) has no // #endregion ${name}`);
    if (found.has(name)) throw new Error(`region ${name} appears twice`);
    found.set(name, dedent(lines.slice(start + 1, end)));
  });
  return found;
}

/** @param {string[]} lines */
function dedent(lines) {
  const indents = lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)?.[0].length ?? 0);
  const common = Math.min(...indents);
  return lines.map((line) => line.slice(common)).join('\n');
}

/**
 * What a marked block must hold: the file as it is (less its region markers, less a final
 * newline), or the region it names.
 * @param {string} root
 * @param {Pick<IncludedBlock, 'file' | 'region'>} block
 */
export function sourceOf(root, block) {
  const text = readFileSync(join(root, block.file), 'utf8');
  if (block.region === undefined) {
    return text
      .split('\n')
      .filter((line) => !/^\s*\/\/ #(end)?region [\w-]+$/.test(line))
      .join('\n')
      .replace(/\n$/, '');
  }
  const region = regions(text).get(block.region);
  if (region === undefined) throw new Error(`${block.file} has no region ${block.region}`);
  return region;
}

/**
 * Every marked block of `markdown` whose text is not what its file holds, as readable lines.
 * @param {string} root
 * @param {string} markdown
 * @returns {string[]}
 */
export function driftedBlocks(root, markdown) {
  return codeBlocks(markdown).blocks.flatMap((block) => {
    const name = `${block.file}${block.region ? `#${block.region}` : ''}`;
    let expected;
    try {
      expected = sourceOf(root, block);
    } catch (error) {
      return [`line ${block.line}: ${name}: ${error instanceof Error ? error.message : String(error)}`];
    }
    if (expected === block.code) return [];
    const ours = block.code.split('\n');
    const theirs = expected.split('\n');
    const at = ours.findIndex((line, index) => line !== theirs[index]);
    const first = at === -1 ? Math.min(ours.length, theirs.length) : at;
    return [`line ${block.line}: the block of ${name} differs from the file at its line ${first + 1}: the page says ${JSON.stringify(ours[first])}, the file ${JSON.stringify(theirs[first])}`];
  });
}
