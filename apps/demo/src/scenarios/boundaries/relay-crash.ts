import { exchange } from '../api-client.js';
import { armFault, readAccount } from '../probes.js';
import { expectations, type Scenario } from '../scenario.js';
import { waitForSettled } from './delivery.js';
import { describe, newKey, paymentId, paymentRequest } from './payment-request.js';

/** 5 · The relay publishes the payment event, the broker acknowledges it, and the process dies before the mark. */
export const relayCrash: Scenario = {
  id: 5,
  title: 'outbox published, crash before marked',
  expected: 'republished; inbox skips it: 1 invoice line',
  proves:
    'The outbox is at-least-once: after the restart the relay publishes the same event again (same event id). Billing’s inbox recognises it, so the payment has exactly one invoice line.',
  async run({ service, newTenant }) {
    const caller = `${newTenant('relay')}:alice`;
    const check = expectations();
    const url = await service.ready();
    await waitForSettled(url, caller);

    await armFault(url, { point: 'relay-after-publish' });
    const exit = service.nextExit();
    const paid = await exchange(url, paymentRequest(caller, newKey('relay')));
    check.expect(paid.kind === 'answered' && paid.status === 201, `the payment succeeded (got ${describe(paid)})`);
    const { signal } = await exit;
    check.expect(signal === 'SIGKILL', `the relay's process died of SIGKILL after publishing (got ${signal})`);

    const restarted = await service.ready();
    const settled = await waitForSettled(restarted, caller, (state) => state.stats.consumer_duplicates >= 1 && state.lines.length >= 1);
    const { stats, lines } = settled.value;
    const id = paymentId(paid);
    check.expect(settled.held, `the event was published again and billing skipped the copy (unpublished ${stats.outbox_unpublished}, duplicates ${stats.consumer_duplicates})`);
    check.expect(lines.length === 1 && lines[0]?.payment_id === id, `exactly one invoice line for ${id} (saw ${lines.length})`);
    const account = await readAccount(restarted, caller, 'acc_1');
    check.expect(account.payments === 1, `one charge (saw ${account.payments})`);
    return check.outcome(1, `SIGKILL after publish; republished; ${stats.consumer_duplicates} duplicate skipped; ${lines.length} invoice line`);
  },
};
