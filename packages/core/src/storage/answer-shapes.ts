/** Shape checks shared by every check of what storage answers (the engine's, the journal's, the relay's). */

/** A non-null object (arrays included), whose members may then be read. */
export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** A safe integer of at least 1: a fence, a sequence number, an attempt count. */
export const isPositiveInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;

/** A short, safe rendering of an answer for an error message (some values cannot be stringified). */
export function describeAnswer(answer: unknown): string {
  if (answer === undefined) return 'undefined';
  try {
    return (JSON.stringify(answer) ?? String(answer)).slice(0, 200);
  } catch {
    return `a ${typeof answer} that cannot be shown`;
  }
}
