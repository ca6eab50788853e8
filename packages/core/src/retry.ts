// `@oncely/core/retry`: the caller's half. Retries with full jitter, Retry-After, budgets and circuit breakers.
export { type BackoffOptions, fullJitter } from './retry/full-jitter.js';
export {
  type BreakerAdmission,
  type BreakerMode,
  type BreakerPermit,
  type CallReport,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  circuitBreaker,
} from './retry/circuit-breaker.js';
export {
  type AttemptEffect,
  type AttemptResult,
  type Classification,
  type Classifier,
  classifyError,
  classifyStatus,
  defaultClassify,
  type RetryReason,
} from './retry/classify.js';
export type { BreakerState, RetryEvent, StopReason } from './retry/events.js';
export type { RetryOutcome } from './retry/outcome.js';
export { parseRetryAfter } from './retry/retry-after.js';
export { type BudgetDecision, type RetryBudget, type RetryBudgetOptions, retryBudget } from './retry/retry-budget.js';
export { isRetryPolicy, type RetryPolicy, type RetryPolicyOptions, retryPolicy } from './retry/retry-policy.js';
export { type AttemptContext, type RetryCallOptions, retry } from './retry/retry.js';
