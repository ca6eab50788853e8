/** Exact decimal amounts with two places: `"10.00"`. Money never becomes a JavaScript number. */
const AMOUNT = /^(?:0|[1-9][0-9]{0,9})\.[0-9]{2}$/;

/** The result of reading an amount from a request. */
export type AmountCheck = { readonly kind: 'valid'; readonly amount: string } | { readonly kind: 'invalid'; readonly detail: string };

/**
 * Accepts a positive decimal string with exactly two places and at most ten integer digits (it fits
 * `numeric(14,2)`); refuses numbers, since `10.1` as a float is not an amount of money.
 */
export function checkAmount(value: unknown): AmountCheck {
  if (typeof value !== 'string') {
    return { kind: 'invalid', detail: 'amount must be a decimal string such as "10.00", not a number' };
  }
  if (!AMOUNT.test(value)) {
    return { kind: 'invalid', detail: 'amount must have two decimal places and at most ten integer digits, e.g. "10.00"' };
  }
  if (/^0\.00$/.test(value)) return { kind: 'invalid', detail: 'amount must be greater than 0.00' };
  return { kind: 'valid', amount: value };
}
