import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A freshly initialised, closed PGlite data folder that suites copy instead of running initdb again. */
    pgliteTemplate: string;
  }
}

/** Vitest global setup: one PGlite initdb for the whole run (it takes seconds on a busy machine). */
export default async function setup(project: TestProject): Promise<() => void> {
  const folder = mkdtempSync(join(tmpdir(), 'oncely-demo-template-'));
  const db = await PGlite.create({ dataDir: folder });
  await db.close();
  project.provide('pgliteTemplate', folder);
  return () => rmSync(folder, { recursive: true, force: true });
}
