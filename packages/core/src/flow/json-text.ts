import { OncelyError } from '../errors.js';

/** True for values JSON keeps exactly: null, booleans, finite numbers, strings, arrays and plain objects of them. */
function isJson(value: unknown, seen: Set<object>): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || seen.has(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) return false;
  seen.add(value);
  const items = Array.isArray(value) ? value : Object.values(value);
  const ok = items.every((item) => isJson(item, seen));
  seen.delete(value);
  return ok;
}

/**
 * `value` as JSON text, `undefined` for `undefined`. Anything JSON would change or drop (a Date, a
 * Map, NaN, a function, a cycle) is an `invalid_state` error naming `what`: a recovery point must
 * replay exactly what the first run saw.
 */
export function toJsonText(value: unknown, what: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isJson(value, new Set())) {
    throw new OncelyError('invalid_state', `oncely: ${what} is not JSON (plain objects, arrays, strings, finite numbers, booleans, null); nothing was recorded`);
  }
  return JSON.stringify(value);
}

/** The value a recorded JSON text stands for. */
export const fromJsonText = (text: string | undefined): unknown => (text === undefined ? undefined : JSON.parse(text));
