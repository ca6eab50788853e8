const DELTA_SECONDS = /^\d+$/;
/** The obsolete asctime() form carries no zone; HTTP says it is GMT. */
const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * Parses an HTTP `Retry-After` value (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Returns the
 * wait in milliseconds from `now` (0 for a date in the past), or undefined when absent or invalid.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (DELTA_SECONDS.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1_000 : undefined;
  }
  const asctime = ASCTIME.test(text);
  // An HTTP-date names a weekday and GMT (or is asctime); other strings Date.parse accepts are not dates here.
  if (!asctime && !(/^[A-Za-z]{3}/.test(text) && / GMT$/.test(text))) return undefined;
  const at = Date.parse(asctime ? `${text} GMT` : text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
