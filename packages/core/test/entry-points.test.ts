import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// Runs against the built package (`npm run build` first; turbo does it): what users import.
const require = createRequire(import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
const subpaths = Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json');
const specifier = (subpath: string) => (subpath === '.' ? '@oncely/core' : `@oncely/core/${subpath.slice(2)}`);

/** Names that left the root for an entry of their own: a user reaches them through that entry. */
const MOVED: Record<string, readonly string[]> = {
  retry: ['retry', 'retryPolicy', 'retryBudget', 'circuitBreaker', 'fullJitter', 'classifyError', 'parseRetryAfter'],
  journal: ['memoryJournal', 'retryOperation', 'describeError'],
  outbox: ['createRelay'],
  otel: ['otelMetrics', 'otelRetryMetrics', 'otelOutboxMetrics'],
  adapter: ['toStorageError', 'storageGuard', 'prepareOutboxEvent', 'resolveBegin', 'assertInboxInput', 'isTransactionalStore', 'backgroundLoop', 'isFlowStore', 'toJsonText'],
};

describe('@oncely/core entry points', () => {
  it('the exports map names the six entries, each with import and require conditions', () => {
    expect(subpaths).toEqual(['.', './retry', './journal', './outbox', './otel', './adapter']);
  });

  it('ESM and CJS export the same names from every entry', async () => {
    for (const subpath of subpaths) {
      const esm = Object.keys(await import(specifier(subpath))).sort();
      const cjs = Object.keys(require(specifier(subpath))).filter((name) => name !== '__esModule').sort();
      expect(esm.length).toBeGreaterThan(0);
      expect(cjs).toEqual(esm);
    }
  });

  it('the root keeps the user API and no longer exports what moved; each moved name is in its entry', async () => {
    const root = await import('@oncely/core');
    for (const name of ['createIdempotency', 'memoryStore', 'fingerprint', 'canonicalize', 'toScope', 'OncelyError', 'StorageError', 'isStorageError', 'manualClock', 'stripeReplayPolicy', 'createCompleter', 'downstreamKey', 'downstreamKeyInput']) {
      expect(name in root).toBe(true);
    }
    for (const [entry, names] of Object.entries(MOVED)) {
      const module = await import(`@oncely/core/${entry}`);
      for (const name of names) {
        expect(name in root).toBe(false);
        expect(name in module).toBe(true);
      }
    }
  });

  it('the adapter entry holds nothing only a user needs', async () => {
    const adapter = await import('@oncely/core/adapter');
    for (const name of ['createIdempotency', 'memoryStore', 'createRelay', 'retry', 'otelMetrics', 'memoryJournal', 'createCompleter', 'downstreamKey']) expect(name in adapter).toBe(false);
  });

  it('entries share one copy of their module state: an error from the adapter entry is the root class, in ESM and in CJS', async () => {
    const [root, adapter] = [await import('@oncely/core'), await import('@oncely/core/adapter')];
    expect(adapter.toStorageError('x', 'claim', new Error('down'))).toBeInstanceOf(root.StorageError);
    const [rootCjs, adapterCjs] = [require('@oncely/core'), require('@oncely/core/adapter')];
    const fromCjs = adapterCjs.toStorageError('x', 'claim', adapterCjs.corruptRecord('bad'));
    expect(fromCjs).toBeInstanceOf(rootCjs.StorageError);
    // Across formats the classes differ, so the brand (a global symbol) is what callers match on.
    expect(root.isStorageError(fromCjs)).toBe(true);
    expect(fromCjs.code).toBe('corrupt_record');
  });
});
