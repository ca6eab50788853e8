import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { realServer, SKIP_REASON, suiteTitle } from '../support/real-server.js';

const status = process.env.MONGODB_URL
  ? 'MONGODB_URL is set: the real-server suites run'
  : 'MONGODB_URL is not set: the real-server suites (store conformance with a 200-way race, runInTransaction, journal, outbox and inbox) are SKIPPED';

describe('real-server suites are never skipped silently', () => {
  afterEach(() => vi.restoreAllMocks());

  it(`this run: ${status}`, () => {
    expect(realServer('status probe', process.env).kind).toBe(process.env.MONGODB_URL ? 'available' : 'skipped');
  });

  it('without MONGODB_URL a suite is skipped and announced by name with the reason and the command to run it', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const server = realServer('mongodb example suite', {});
    expect(server).toEqual({ kind: 'skipped', reason: SKIP_REASON, summary: 'MONGODB_URL is not set' });
    expect(warn).toHaveBeenCalledTimes(1);
    const message = String(warn.mock.calls[0]![0]);
    expect(message).toContain('SKIPPED "mongodb example suite"');
    expect(message).toContain('MONGODB_URL is not set');
    expect(message).toContain('MONGODB_URL=mongodb://localhost:27017/?replicaSet=rs0 npm test -w @oncely/mongodb');
    expect(suiteTitle('mongodb example suite', server)).toBe('mongodb example suite [SKIPPED: MONGODB_URL is not set]');
  });

  it('with MONGODB_URL the suite runs and nothing is announced', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(realServer('mongodb example suite', { MONGODB_URL: 'mongodb://db:27017' })).toEqual({ kind: 'available', url: 'mongodb://db:27017' });
    expect(warn).not.toHaveBeenCalled();
  });

  it('every real-server test file decides through realServer and skips only with describe.skipIf', () => {
    const folder = join(import.meta.dirname, '..', 'real-server');
    const files = readdirSync(folder).filter((file) => file.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const source = readFileSync(join(folder, file), 'utf8');
      expect(source).toContain('realServer(');
      expect(source).toContain('describe.skipIf(');
      expect(source).not.toMatch(/\b(describe|it|test)\.skip\(/);
    }
  });
});
