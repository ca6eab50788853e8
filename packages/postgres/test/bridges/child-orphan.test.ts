import { startProcess, until } from '@oncely/test-support';
import { uniqueKey } from '@oncely/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, migratedSchema } from '../support/database.js';
import { paymentsTable } from './cases/bridge-case.js';

// The kill test's child holds an ORM transaction open until it is SIGKILLed; if the test run dies
// first, the child must not stay behind holding it (and the shared server's xmin).
const { pool, schema } = migratedSchema('child_orphan', { max: 2 });
beforeAll(() => pool.query(paymentsTable(schema)).then(() => undefined));

const PARENT = new URL('./fixtures/orphan-parent.ts', import.meta.url);
const CASE = new URL('./cases/knex.ts', import.meta.url);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const left: number[] = [];
afterAll(() => {
  // Whatever the test saw, nothing of it stays running.
  for (const pid of left) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe('the bridge kill test’s child process', () => {
  it('exits when its parent dies while it holds the ORM transaction open, and the server ends that transaction', async () => {
    const parent = startProcess(PARENT, { databaseUrl: DATABASE_URL, schema, caseModule: CASE.href, key: uniqueKey('orphan'), amount: 10 }, ['--import', 'tsx']);
    const holding = (await parent.point('child-holding')) as { childPid?: number; backendPid?: number };
    const { childPid, backendPid } = holding as { childPid: number; backendPid: number };
    left.push(childPid);
    const open = async () =>
      (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND xact_start IS NOT NULL`, [backendPid])).rowCount === 1;
    expect([alive(childPid), await open()]).toEqual([true, true]);
    await parent.kill();
    await until('the orphaned child exited', () => !alive(childPid), 15_000);
    await until("the child's transaction ended on the server", async () => !(await open()), 15_000);
  });
});
