import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BROWSER_ENTRY, bundle } from './support/page-bundle.js';

/** The published file an app's bundler starts from (`@oncely/http/browser`). */
const PUBLISHED = fileURLToPath(new URL('../../dist/browser.js', import.meta.url));

describe('@oncely/http/browser bundles for browsers', () => {
  for (const [what, entry] of [
    ['the published dist/browser.js', PUBLISHED],
    ['the sources', BROWSER_ENTRY],
  ] as const) {
    it(`${what}: one self-contained ESM bundle with no node: import, under 40 kB minified`, async () => {
      expect(existsSync(entry), `${entry} is missing: build the package first (npm run build -w @oncely/http)`).toBe(true);
      const { text, metafile } = await bundle(entry, { minify: true });
      const output = Object.values(metafile.outputs)[0]!;
      // Nothing left to resolve at run time, and no Node built-in anywhere in the graph.
      expect(output.imports).toEqual([]);
      const imported = Object.values(metafile.inputs).flatMap((input) => input.imports.map((found) => found.path));
      expect(imported.filter((path) => path.startsWith('node:') || !path.includes('/'))).toEqual([]);
      expect(text).not.toMatch(/node:|require\(/);
      // The server bindings stay out: only the client, the browser modules and what they use.
      const sources = Object.keys(metafile.inputs).filter((path) => !path.includes('core/dist'));
      expect(sources.filter((path) => /express|fastify|fetch\/|lookup|handle-exchange|request-fingerprint/.test(path))).toEqual([]);
      const bytes = Buffer.byteLength(text);
      const gzipped = gzipSync(text).byteLength;
      console.log(`@oncely/http/browser from ${what}: ${bytes} bytes minified, ${gzipped} gzipped, ${Object.keys(metafile.inputs).length} modules`);
      expect(bytes).toBeLessThan(40_000);
    });
  }
});
