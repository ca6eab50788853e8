import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { entryCommand } from '../src/supervisor/service-entry.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Runs `npm run demo:scenarios` (its dist when built from the current sources) and collects its output and exit code. */
function runScenarios(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const { execArgv, entry } = entryCommand('scenarios');
  const flags = ['--store', 'postgres', '--database-url', url, '--schema', 'oncely_demo_cli', '--port', '7313', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...execArgv, entry, ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('npm run demo:scenarios', () => {
  it('prints the table (scenario, attempts, effects, expected, result) and exits 0 when every scenario passes', async () => {
    const { code, output } = await runScenarios(['--only', '4']);
    expect(output).toMatch(/#\s+scenario\s+attempts\s+effects observed\s+expected\s+result/);
    expect(output).toMatch(/4\s+same key, different body\s+3\s+201, then 422, then replayed 201; 1 charge, 990\.00\s+.*PASS/);
    expect(code).toBe(0);
  });

  it('exits 1 and names the broken expectation when the service forgets keys too early (retention 1 ms)', async () => {
    const { code, output } = await runScenarios(['--only', '4', '--retention-ms', '1', '--lease-ms', '1']);
    expect(output).toMatch(/4\s+same key, different body.*FAIL/);
    expect(output).toMatch(/one charge of 10\.00 \(saw [23] charges/);
    expect(code).toBe(1);
  });
});
