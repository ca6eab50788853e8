import { fork } from 'node:child_process';
import { once } from 'node:events';
import type { Report } from './report.js';

/** One report entry, sent from a suite's process to the bench's. */
type SuiteMessage =
  | { readonly kind: 'section'; readonly title: string; readonly body: string }
  | { readonly kind: 'attach'; readonly name: string; readonly content: string };

const SUITE_VARIABLE = 'ONCELY_BENCH_SUITE';

/** The suite this process was started to run alone, or undefined in the bench's own process. */
export function ownSuite(): string | undefined {
  return process.env[SUITE_VARIABLE];
}

/**
 * Runs `suite` in a fresh Node process on this same entry point and arguments (or `entry`), so that
 * no suite inherits another's JIT feedback or heap (the reason JMH forks per benchmark); every entry
 * its report gets lands in `report`, in order.
 */
export async function runInOwnProcess(suite: string, report: Report, entry = process.argv[1]!): Promise<void> {
  const child = fork(entry, process.argv.slice(2), { env: { ...process.env, [SUITE_VARIABLE]: suite } });
  child.on('message', (message: SuiteMessage) => {
    if (message.kind === 'section') report.section(message.title, message.body);
    else report.attach(message.name, message.content);
  });
  // `close` comes after the last message, unlike `exit`.
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) throw new Error(`bench: the ${suite} suite's process ended with ${signal ?? `exit code ${code}`}`);
}

/** The report of a suite's own process: entries go to the bench's process, which prints and writes them. */
export function forwardingReport(): Report & { flushed(): Promise<void> } {
  const sent: Promise<void>[] = [];
  const send = (message: SuiteMessage) =>
    sent.push(new Promise((resolve, reject) => process.send!(message, undefined, {}, (error) => (error ? reject(error) : resolve()))));
  return {
    section: (title, body) => send({ kind: 'section', title, body }),
    attach: (name, content) => send({ kind: 'attach', name, content }),
    write: () => Promise.reject(new Error('bench: a suite process does not write the report')),
    flushed: async () => {
      await Promise.all(sent);
    },
  };
}
