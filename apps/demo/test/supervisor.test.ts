import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/cli/package-root.js';
import { exchange } from '../src/scenarios/api-client.js';
import { superviseService } from '../src/supervisor/service-process.js';

const folder = mkdtempSync(join(tmpdir(), 'oncely-demo-supervisor-'));
const command = { execArgv: [], entry: join(packageRoot(), 'test', 'fixtures', 'flaky-service.mjs') };

afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('the supervisor', () => {
  it('tries a failed start again, restarts the service after a SIGKILL, and stops it for good', async () => {
    const lines: string[] = [];
    const service = await superviseService({
      args: [join(folder, 'marker')],
      command,
      log: (line) => lines.push(line),
    });
    expect(lines.join('\n')).toContain('starting the service again (2/3)');
    const before = service.state;
    if (before.kind !== 'up') throw new Error('not up');

    const exit = service.nextExit();
    process.kill(before.pid, 'SIGKILL');
    expect(await exit).toMatchObject({ pid: before.pid, signal: 'SIGKILL' });
    const url = await service.ready();
    const answer = await exchange(url, { method: 'GET', path: '/' });
    expect(answer).toMatchObject({ kind: 'answered', status: 200 });
    expect(Number((answer as { body: unknown }).body)).not.toBe(before.pid);
    expect(service.restarts).toBe(1);

    await service.stop();
    expect(service.state.kind).toBe('down');
    expect(service.restarts).toBe(1);
  });
});
