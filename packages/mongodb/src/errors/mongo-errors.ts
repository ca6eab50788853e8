/**
 * What a driver error means to oncely, read from `code` and error labels rather than `instanceof`, so
 * it holds for driver 6.x and 7.x and for two copies of the driver in one process:
 * - `duplicate_key`: E11000, a concurrent upsert inserted the same `_id` first; the record now exists;
 * - `write_conflict`: inside a transaction, another open transaction has written the same document;
 * - `unknown_commit_result`: the commit may or may not have applied; committing again is safe;
 * - `other`: network, timeout, authentication, validation and the rest.
 */
export type MongoFailure = 'duplicate_key' | 'write_conflict' | 'unknown_commit_result' | 'other';

const DUPLICATE_KEY_CODES = new Set([11000, 11001]);
const WRITE_CONFLICT = 112;

function hasLabel(error: object, label: string): boolean {
  const withLabels = error as { hasErrorLabel?: (label: string) => boolean; errorLabels?: unknown };
  if (typeof withLabels.hasErrorLabel === 'function') return withLabels.hasErrorLabel(label);
  return Array.isArray(withLabels.errorLabels) && withLabels.errorLabels.includes(label);
}

/** Classifies whatever the driver threw. */
export function classifyMongoError(error: unknown): MongoFailure {
  if (typeof error !== 'object' || error === null) return 'other';
  const code = (error as { code?: unknown }).code;
  if (hasLabel(error, 'UnknownTransactionCommitResult')) return 'unknown_commit_result';
  if (code === WRITE_CONFLICT) return 'write_conflict';
  if (typeof code === 'number' && DUPLICATE_KEY_CODES.has(code)) return 'duplicate_key';
  return 'other';
}
