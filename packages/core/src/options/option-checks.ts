import { OncelyError } from '../errors.js';

/**
 * The error for an option no caller could run with: code `invalid_option`, the message prefixed by
 * who refuses it, e.g. `invalidOption('oncely/redis', 'stream must name at least one stream')`.
 */
export function invalidOption(owner: string, message: string): OncelyError {
  return new OncelyError('invalid_option', `${owner}: ${message}`);
}

const atLeast = (minimum: number) =>
  minimum === 1 ? 'a positive integer' : minimum === 0 ? 'a non-negative integer' : `an integer >= ${minimum}`;

/**
 * Returns `value` when it is a safe integer of at least `minimum` (default 1); otherwise throws
 * `invalid_option` as `<label> must be a positive integer, got <value>`, with `label` naming the
 * owner and the option: `integerOption('oncely/redis: batchSize', options.batchSize ?? 50)`.
 */
export function integerOption(label: string, value: unknown, minimum = 1): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= minimum) return value;
  throw new OncelyError('invalid_option', `${label} must be ${atLeast(minimum)}, got ${String(value)}`);
}

/** Returns `value` when it is a finite number of at least `minimum` (default 0); otherwise throws `invalid_option`. */
export function numberOption(label: string, value: unknown, minimum = 0): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= minimum) return value;
  throw new OncelyError('invalid_option', `${label} must be a finite number >= ${minimum}, got ${String(value)}`);
}
