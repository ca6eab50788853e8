import { backgroundCrashScenario } from './background-crash.js';

/** 6 · Billing commits the invoice line (with its inbox row), and the process dies before acknowledging the message. */
export const consumerCrash = backgroundCrashScenario({
  id: 6,
  title: 'consumer applied, crash before ack',
  expected: 'redelivered; inbox skips it: 1 invoice line',
  proves:
    'The broker redelivers the unacknowledged message after the restart. The inbox row committed with the invoice line, so the redelivery is acknowledged and skipped: effectively once, not exactly once.',
  point: 'consumer-before-ack',
  story: 'SIGKILL before ack; redelivered',
});
