// @ts-check
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * Every file of the repository at `root` that git tracks or would track (uncommitted ones too),
 * that still exists, relative to `root`.
 * @param {string} root
 * @returns {string[]}
 */
export function repositoryFiles(root) {
  return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(root, file)) && statSync(join(root, file)).isFile());
}

/**
 * Names of files that are not in the repository: a design document the project once cited and never
 * held, and the folders of the machine it was written on. Spelled as patterns, so this file is not a
 * hit of its own.
 */
export const OUTSIDE_REFERENCES = [/DESIGN\.md/, /\.\.\/shared\b/, /\/work\//];

/**
 * Every line of the text files of `files` that names something outside the repository.
 * @param {string} root
 * @param {readonly string[]} files
 * @returns {string[]} `file:line: text`
 */
export function outsideReferences(root, files) {
  return files.flatMap((file) => {
    const bytes = readFileSync(join(root, file));
    if (bytes.includes(0)) return []; // binary: a screenshot, a font
    return bytes
      .toString('utf8')
      .split('\n')
      .flatMap((line, index) => (OUTSIDE_REFERENCES.some((pattern) => pattern.test(line)) ? [`${file}:${index + 1}: ${line.trim()}`] : []));
  });
}

/**
 * GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens; a repeated one
 * gets `-1`, `-2`…
 * @param {string} markdown
 * @returns {Set<string>}
 */
export function anchors(markdown) {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  /** @type {Map<string, number>} */
  const seen = new Map();
  const found = new Set();
  for (const [, heading] of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = (heading ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const [, id] of prose.matchAll(/<a (?:name|id)="([^"]+)"/g)) found.add(id ?? '');
  return found;
}

/**
 * Every relative link of the Markdown files among `files` that leaves the repository, names a file
 * that is not there, or a heading its page does not have.
 * @param {string} root
 * @param {readonly string[]} files
 * @returns {string[]} `file: target: why`
 */
export function brokenLinks(root, files) {
  const pages = files.filter((file) => file.endsWith('.md'));
  return pages.flatMap((page) => {
    const markdown = readFileSync(join(root, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
    return [...markdown.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].flatMap(([, target = '']) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return []; // https:, mailto:
      const [path = '', fragment] = target.split('#');
      const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
      if (relative(root, join(root, file)).startsWith('..')) return [`${page}: ${target}: leaves the repository`];
      if (!existsSync(join(root, file))) return [`${page}: ${target}: no such file`];
      if (fragment && file.endsWith('.md') && !anchors(readFileSync(join(root, file), 'utf8')).has(fragment)) {
        return [`${page}: ${target}: ${file} has no heading #${fragment}`];
      }
      return [];
    });
  });
}
