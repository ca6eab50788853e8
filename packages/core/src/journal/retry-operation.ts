import { type AttemptContext, retry } from '../retry/retry.js';
import type { RetryOutcome } from '../retry/outcome.js';
import { type RetryPolicy, type RetryPolicyOptions, retryPolicy } from '../retry/retry-policy.js';
import type { JournalEntry, JsonValue, OperationJournal } from './journal.js';
import { checkedBegin, checkedEntry } from './journal-answers.js';

/** What each attempt of a journaled operation receives: the retry context plus the durable key. */
export interface OperationAttemptContext extends AttemptContext {
  /** The operation's idempotency key, from the journal: the same for every attempt and every process. */
  readonly key: string;
}

/** Options of {@link retryOperation}. */
export interface RetryOperationOptions<T> {
  readonly journal: OperationJournal;
  /** The caller's stable id for this logical operation: the same id resumes it after a restart. */
  readonly operationId: string;
  /** Stored at the first begin, for reconciliation (never put secrets here). */
  readonly request?: JsonValue;
  /** Turns a success into JSON for the journal (default: the value itself, which must be JSON). */
  readonly encode?: (value: T) => JsonValue;
  /** Rebuilds a success recorded by an earlier run (default: the stored JSON as is). */
  readonly decode?: (stored: JsonValue | undefined) => T;
  /** Turns a definitive failure into JSON for the journal (default: name, message, code and status). */
  readonly encodeError?: (error: unknown) => JsonValue;
  /** Rebuilds a failure recorded by an earlier run (default: the stored JSON as is). */
  readonly decodeError?: (stored: JsonValue | undefined) => unknown;
  /** Interrupts the attempt and the backoff sleep. */
  readonly signal?: AbortSignal;
}

/** Keeps what identifies an error, never its stack or arbitrary fields (they may hold secrets). */
export function describeError(error: unknown): JsonValue {
  if (typeof error !== 'object' || error === null) return { message: String(error) };
  const described: Record<string, JsonValue> = {};
  for (const field of ['name', 'message', 'code', 'status'] as const) {
    const value = (error as Record<string, unknown>)[field];
    if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) described[field] = value;
  }
  return described;
}

const errorText = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : JSON.stringify(describeError(error));

/** The outcome an earlier run recorded, or undefined while the operation is still open. */
function recorded<T>(entry: JournalEntry, options: RetryOperationOptions<T>): RetryOutcome<T> | undefined {
  if (entry.state === 'succeeded') {
    const value = options.decode ? options.decode(entry.value) : (entry.value as T);
    return { outcome: 'succeeded', value, attempts: entry.attempts };
  }
  if (entry.state === 'failed') {
    const error = options.decodeError ? options.decodeError(entry.error) : entry.error;
    return { outcome: 'failed', error, attempts: entry.attempts, stoppedBy: 'answer' };
  }
  return undefined;
}

/**
 * `retry` for one logical operation recorded in a journal. The key is generated once and persisted
 * before the first attempt; each attempt is counted in the journal before it is sent; a process that
 * crashed and runs the same `operationId` again resumes with the same key, and one that finds a
 * definitive outcome returns it without sending anything.
 *
 * Recorded afterwards: `succeeded`, a definitive `failed`, or `unknown` (with the last error). A
 * failure where every attempt was refused before running (429s, say, until a limit) leaves the
 * entry `pending`, so running the operation again retries it under the same key. Journal failures
 * are thrown (`StorageError`): no attempt is sent without its record.
 */
export async function retryOperation<T>(
  fn: (context: OperationAttemptContext) => Promise<T>,
  policyOrOptions: RetryPolicy<T> | RetryPolicyOptions<T>,
  options: RetryOperationOptions<T>,
): Promise<RetryOutcome<T>> {
  const policy = retryPolicy(policyOrOptions);
  const { journal, operationId } = options;
  // An answer outside the journal's contract is refused (`corrupt_record`) before any attempt is sent.
  const { entry } = checkedBegin(journal, operationId, await journal.begin(operationId, options.request === undefined ? {} : { request: options.request }));
  const done = recorded(entry, options);
  if (done) return done;

  const { key } = entry;
  let journalFailure: { error: unknown } | undefined;
  let settledElsewhere: JournalEntry | undefined;
  // The spread keeps the policy's brand: its fields were validated when it was created.
  const guarded = retryPolicy<T>({
    ...policy,
    // A journal failure stops the run at once; the classifier must not mistake it for the dependency's.
    classify: (result, context) => (journalFailure || settledElsewhere ? { verdict: 'failure', blame: 'request' } : policy.classify(result, context)),
  });
  const outcome = await retry(
    async (context) => {
      let counted: JournalEntry;
      try {
        counted = checkedEntry(journal, 'journal.recordAttempt', operationId, key, await journal.recordAttempt(operationId));
      } catch (error) {
        journalFailure = { error };
        throw error;
      }
      if (counted.state === 'succeeded' || counted.state === 'failed') {
        // Another process recorded the answer meanwhile: sending again would only replay it.
        settledElsewhere = counted;
        throw new Error('settled elsewhere');
      }
      return fn({ ...context, key });
    },
    guarded,
    { key, ...(options.signal ? { signal: options.signal } : {}) },
  );
  if (journalFailure) throw journalFailure.error;
  if (settledElsewhere) return recorded(settledElsewhere, options)!;

  if (outcome.outcome === 'succeeded') {
    const value = options.encode ? options.encode(outcome.value) : (outcome.value as JsonValue);
    await journal.complete(operationId, value === undefined ? { state: 'succeeded' } : { state: 'succeeded', value });
  } else if (outcome.outcome === 'failed' && outcome.stoppedBy === 'answer') {
    await journal.complete(operationId, { state: 'failed', error: (options.encodeError ?? describeError)(outcome.error) });
  } else if (outcome.outcome === 'unknown') {
    await journal.markUnknown(operationId, errorText(outcome.lastError).slice(0, 1_000));
  }
  return outcome;
}
