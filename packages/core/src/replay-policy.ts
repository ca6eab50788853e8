import type { TerminalState } from './store.js';

/** What an outcome becomes: stored and replayed, or released so a retry may execute again. */
export type OutcomeDecision = TerminalState | 'release';

/** Decides, from the handler's response, whether the outcome is replayed or released. */
export type ReplayPolicy = (response: { readonly status: number }) => OutcomeDecision;

/** Statuses that say "try again": the request did not settle anything. */
const RETRYABLE_CLIENT_ERRORS = new Set([408, 409, 425, 429]);

/**
 * The default policy: 1xx–3xx → `succeeded`; 4xx other than 408/409/425/429 → `failed_final`;
 * 5xx (and thrown errors) → released, so the retry executes again.
 */
export const defaultReplayPolicy: ReplayPolicy = ({ status }) => {
  if (status < 400) return 'succeeded';
  if (status < 500 && !RETRYABLE_CLIENT_ERRORS.has(status)) return 'failed_final';
  return 'release';
};

/**
 * Stripe's published policy: once the endpoint began executing, the first status and body are
 * stored, 5xx included. 409 and 429 are answered before execution starts, so they are released.
 * Thrown errors are still released (no response exists to store).
 */
export const stripeReplayPolicy: ReplayPolicy = ({ status }) => {
  if (status === 409 || status === 429) return 'release';
  return status < 400 ? 'succeeded' : 'failed_final';
};
