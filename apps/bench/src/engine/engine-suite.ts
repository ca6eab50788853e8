import { createHash } from 'node:crypto';
import { createIdempotency, keyHash, memoryStore, sha256Hex } from '@oncely/core';
import type { BenchOptions } from '../cli/options.js';
import { alternate } from '../harness/alternating.js';
import { closedLoop } from '../harness/closed-loop.js';
import { formatMs, formatRate, markdownTable } from '../harness/markdown.js';
import type { Report } from '../harness/report.js';
import { firstRequestContender, replayContender, seedKeys } from '../harness/workload-runs.js';
import { oncelyLeaseSubject } from '../subjects/oncely-subject.js';
import { subjectOperations } from '../subjects/operations.js';
import { paymentEffect } from '../subjects/payment-effect.js';

/**
 * The engine alone, on the memory store (no I/O), and the SHA-256 it runs per request: the
 * CPU oncely adds on top of any store's round trips, so the store ratios can be read against it.
 */
export async function runEngineSuite(options: BenchOptions, report: Report): Promise<void> {
  const effect = paymentEffect(false);
  const timing = { concurrency: 1, durationMs: options.durationMs };
  const engine = oncelyLeaseSubject('oncely engine', createIdempotency({ store: memoryStore() }));
  const first = { ...subjectOperations(engine, effect), name: 'first request (claim, handler, complete)' };
  const replay = { ...subjectOperations(engine, effect), name: 'replay' };
  const text = JSON.stringify({ operation: 'payments.create.v1', request: { amount: 1000, currency: 'EUR', customer: 'cus_bench' } });
  const result = await alternate(
    [
      firstRequestContender(first, timing, 'engine'),
      replayContender(replay, timing, await seedKeys(first, 'engine', options.replayKeys)),
      { name: '`sha256Hex` (as the engine hashes)', run: () => closedLoop({ ...timing, operation: () => sha256Hex(text) }) },
      { name: '`keyHash`', run: () => closedLoop({ ...timing, operation: (i) => keyHash(`key-${i}`) }) },
      {
        name: '`node:crypto` createHash, same input (for scale)',
        run: () => closedLoop({ ...timing, operation: async () => createHash('sha256').update(text).digest('hex') }),
      },
    ],
    options.rounds,
  );
  report.section(
    'oncely engine alone (memory store, no I/O), concurrency 1',
    [
      markdownTable(
        ['operation', 'ops/s (median)', 'µs per op', 'p50 ms', 'p99 ms'],
        [...result.byName.values()].map((r) => [
          r.name,
          formatRate(r.medianOpsPerSec),
          (1e6 / r.medianOpsPerSec).toFixed(1),
          formatMs(r.medianP50),
          formatMs(r.medianP99),
        ]),
      ),
      '',
      'Every request hashes its fingerprint before it touches a store; the key hash is computed only when an event or the',
      "handler reads it. On Node the engine uses `node:crypto` through `process.getBuiltinModule` (Web Crypto elsewhere), so",
      'the rows match the bare hash.',
    ].join('\n'),
  );
}
