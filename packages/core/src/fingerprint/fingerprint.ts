import { OncelyError } from '../errors.js';
import { canonicalize, DEFAULT_MAX_DEPTH } from './canonicalize.js';
import { excludePaths, type FieldPath, omitDefaults, selectPaths } from './field-paths.js';
import { sha256HexNow } from './sha256.js';

/** Which request fields affect the operation. Transport fields (trace ids) must never enter. */
export interface FingerprintOptions {
  /** Keep only these field paths. */
  readonly select?: readonly FieldPath[];
  /** Drop these field paths (applied after `select`). */
  readonly exclude?: readonly FieldPath[];
  /** Field path → default value; a field equal to its default counts as omitted. */
  readonly defaults?: Readonly<Record<string, unknown>>;
  /**
   * Deepest nesting of arrays and objects in the request (default 512, `[]` is depth 1); a deeper
   * request is refused with `invalid_request_payload` before it can exhaust the stack.
   */
  readonly maxDepth?: number;
}

/** The request as it enters the fingerprint, after `select`, `exclude` and `defaults`. */
export function fingerprintInput(operation: string, request: unknown, options: FingerprintOptions = {}): string {
  if (typeof operation !== 'string' || operation.length === 0) {
    throw new OncelyError('missing_operation', 'oncely: fingerprint needs an operation name');
  }
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 1) {
    throw new OncelyError('invalid_option', `oncely: fingerprint maxDepth must be a positive integer, got ${maxDepth}`);
  }
  let selected = request;
  if (options.select) selected = selectPaths(selected, options.select, maxDepth);
  if (options.exclude) selected = excludePaths(selected, options.exclude, maxDepth);
  if (options.defaults) selected = omitDefaults(selected, options.defaults, maxDepth);
  // One level more for the `{ operation, request }` wrapper.
  return canonicalize({ operation, request: selected }, { maxDepth: maxDepth + 1 });
}

/** Internal: {@link fingerprint}, synchronous where Node's hash exists; throws on an invalid payload. */
export function fingerprintNow(operation: string, request: unknown, options?: FingerprintOptions): string | Promise<string> {
  return sha256HexNow(fingerprintInput(operation, request, options));
}

/**
 * Lowercase hex SHA-256 of the RFC 8785 canonical JSON of `{operation, request}`: the digest that
 * binds an idempotency key to the request it was first used with.
 */
export async function fingerprint(
  operation: string,
  request: unknown,
  options: FingerprintOptions = {},
): Promise<string> {
  return fingerprintNow(operation, request, options);
}
