import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clausesOfTitle, runFlowConformance, runJournalConformance, runOutboxSourceConformance, runStoreConformance, type TestRunner } from '../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The contracts whose clauses these suites own (other suites add their own rows to the table). */
const OWNED = ['store.', 'tx.', 'journal.', 'outbox-source.', 'flow.'];
const owned = (id: string) => OWNED.some((prefix) => id.startsWith(prefix));

/** Clause id → the titles of the tests that carry it, from the suites as registered with their defaults. */
function registered(): Map<string, string[]> {
  const titles = new Map<string, string[]>();
  const unused = () => {
    throw new Error('registration only');
  };
  const runner: TestRunner = {
    describe: (_name, body) => body(),
    it: (name) => {
      for (const clause of clausesOfTitle(name)) titles.set(clause, [...(titles.get(clause) ?? []), name.replace(/^\[[^\]]*\] /, '')]);
    },
    expect: unused as unknown as TestRunner['expect'],
  };
  runStoreConformance(runner, { name: 'store', createStore: unused });
  runJournalConformance(runner, { name: 'journal', createJournal: unused });
  runOutboxSourceConformance(runner, { name: 'outbox', createOutbox: unused });
  runFlowConformance(runner, { name: 'flows', createStore: unused, write: unused, count: unused });
  return titles;
}

/** Clause id → the titles the README's contract table lists for it. */
function documented(): Map<string, string[]> {
  const readme = readFileSync(join(here, '..', 'README.md'), 'utf8');
  const rows = new Map<string, string[]>();
  for (const line of readme.split('\n')) {
    const cells = /^\| `([a-z0-9.-]+)` \| [^|]+ \| [^|]+ \| (.+) \|$/.exec(line);
    if (cells) rows.set(cells[1]!, cells[2]!.split('<br>').map((title) => title.replace(/^“|”$/g, '')));
  }
  return rows;
}

/** The source file of core that declares `interface name`. */
function declaring(name: string): string {
  const walk = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(folder, entry.name)) : [join(folder, entry.name)]));
  const file = walk(join(here, '..', '..', 'core', 'src')).find((path) => new RegExp(`export interface ${name}\\b`).test(readFileSync(path, 'utf8')));
  if (!file) throw new Error(`no file of core declares ${name}`);
  return readFileSync(file, 'utf8');
}

describe('the contract is written once, and every clause has its test', () => {
  const tests = registered();
  const table = documented();

  it('every clause a test carries has a row in the README table, and every row of these contracts has its tests', () => {
    expect([...table.keys()].filter(owned).sort()).toEqual([...tests.keys()].sort());
    expect(tests.size).toBeGreaterThanOrEqual(70);
  });

  it("the README lists each clause's tests by their exact titles", () => {
    for (const [clause, titles] of tests) expect(table.get(clause), clause).toEqual(titles);
  });

  it("each contract's TSDoc names every one of its clauses", () => {
    const sources = { store: declaring('IdempotencyStore'), tx: declaring('TransactionalStore'), journal: declaring('OperationJournal'), 'outbox-source': declaring('OutboxSource'), flow: declaring('FlowStore') };
    for (const clause of tests.keys()) {
      const contract = clause.split('.')[0] as keyof typeof sources;
      expect(sources[contract].includes(`\`${clause}\``), `${clause} is not in the TSDoc of its contract`).toBe(true);
    }
  });
});
