import { backgroundCrashScenario } from './background-crash.js';

/** 5 · The relay publishes the payment event, the broker acknowledges it, and the process dies before the mark. */
export const relayCrash = backgroundCrashScenario({
  id: 5,
  title: 'outbox published, crash before marked',
  expected: 'republished; inbox skips it: 1 invoice line',
  proves:
    'The outbox is at-least-once: after the restart the relay publishes the same event again (same event id). Billing’s inbox recognises it, so the payment has exactly one invoice line.',
  point: 'relay-after-publish',
  story: 'SIGKILL after publish; republished',
});
