import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';

/** The published browser entry point, `@oncely/http/browser`. */
export const BROWSER_ENTRY = fileURLToPath(new URL('../../../src/browser.ts', import.meta.url));
/** The test page: the browser entry, the conformance suites and the in-page runner. */
export const PAGE_ENTRY = fileURLToPath(new URL('./page-entry.ts', import.meta.url));

/** One ESM bundle for browsers, as an app's bundler would make it. */
export interface Bundle {
  readonly text: string;
  readonly metafile: Metafile;
}

/** Bundles `entry` with esbuild for the browser platform: everything inlined, nothing external. */
export async function bundle(entry: string, options: { readonly minify?: boolean } = {}): Promise<Bundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: options.minify ?? false,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { text: result.outputFiles[0]!.text, metafile: result.metafile };
}
