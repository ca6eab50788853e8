import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createReport } from '../src/harness/report.js';
import { runInOwnProcess } from '../src/harness/suite-process.js';

const child = fileURLToPath(new URL('./fixtures/suite-child.mjs', import.meta.url));

describe('a suite in its own process', () => {
  it("lands every section and attachment of the suite's report in the bench's report, in order", async () => {
    const report = createReport('# header', () => undefined);
    await runInOwnProcess('redis', report, child);
    await runInOwnProcess('http', report, child);
    const dir = await mkdtemp(join(tmpdir(), 'bench-report-'));
    try {
      const text = await readFile(await report.write(dir, 'report.md'), 'utf8');
      expect(text.match(/^## .*$/gm)).toEqual(['## redis: first', '## redis: second', '## http: first', '## http: second']);
      expect(text).toContain('x'.repeat(200_000));
      expect(await readFile(join(dir, 'http.svg'), 'utf8')).toBe('<svg/>');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a suite process that fails fails the bench, naming the suite and how it ended', async () => {
    await expect(runInOwnProcess('crashes', createReport('# header', () => undefined), child)).rejects.toThrow(
      "bench: the crashes suite's process ended with exit code 3",
    );
  });
});
