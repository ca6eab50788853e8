// A calling process for the crash test: charges through idempotentFetch with a PostgreSQL journal and
// prints each retry event, then the outcome, as JSON lines. It imports the built packages, as an
// application would. The parent SIGKILLs it during a backoff sleep and starts it again.
import { retryPolicy } from '@oncely/core/retry';
import { idempotentFetch } from '@oncely/http';
import { postgresJournal } from '@oncely/postgres';
import pg from 'pg';

const { TARGET_URL, DATABASE_URL, JOURNAL_SCHEMA, OPERATION_ID } = process.env;
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
const journal = postgresJournal({ db: pool, schema: JOURNAL_SCHEMA });
// A long, deterministic backoff: the parent kills the process while it sleeps between attempts.
const policy = retryPolicy({
  maxAttempts: 3,
  baseMs: 30_000,
  capMs: 30_000,
  random: () => 0.99,
  deadlineMs: 120_000,
  attemptTimeoutMs: 10_000,
  onEvent: (event) => say({ event: event.type, attempt: event.attempt, reason: event.reason }),
});

const outcome = await idempotentFetch(
  TARGET_URL,
  { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 25 }) },
  { operationId: OPERATION_ID, journal, policy },
);
const entry = await journal.get(OPERATION_ID);
say({
  outcome: outcome.outcome,
  status: outcome.outcome === 'succeeded' ? outcome.value.status : undefined,
  replayed: outcome.outcome === 'succeeded' ? outcome.value.headers.get('idempotent-replayed') : undefined,
  body: outcome.outcome === 'succeeded' ? await outcome.value.json() : undefined,
  key: entry?.key,
});
await pool.end();
