import { exchange } from '../api-client.js';
import { armFault, readAccount } from '../probes.js';
import { expectations, type Scenario } from '../scenario.js';
import { waitForSettled } from './delivery.js';
import { describe, newKey, paymentId, paymentRequest } from './payment-request.js';

/** 6 · Billing commits the invoice line (with its inbox row), and the process dies before acknowledging the message. */
export const consumerCrash: Scenario = {
  id: 6,
  title: 'consumer applied, crash before ack',
  expected: 'redelivered; inbox skips it: 1 invoice line',
  proves:
    'The broker redelivers the unacknowledged message after the restart. The inbox row committed with the invoice line, so the redelivery is acknowledged and skipped: effectively once, not exactly once.',
  async run({ service, newTenant }) {
    const caller = `${newTenant('consumer')}:alice`;
    const check = expectations();
    const url = await service.ready();
    await waitForSettled(url, caller);

    await armFault(url, { point: 'consumer-before-ack' });
    const exit = service.nextExit();
    const paid = await exchange(url, paymentRequest(caller, newKey('consumer')));
    check.expect(paid.kind === 'answered' && paid.status === 201, `the payment succeeded (got ${describe(paid)})`);
    const { signal } = await exit;
    check.expect(signal === 'SIGKILL', `billing's process died of SIGKILL before the ack (got ${signal})`);

    const restarted = await service.ready();
    const settled = await waitForSettled(restarted, caller, (state) => state.stats.consumer_duplicates >= 1);
    const { stats, lines } = settled.value;
    const id = paymentId(paid);
    check.expect(settled.held, `the message was redelivered and skipped (unacked ${settled.value.unacked}, duplicates ${stats.consumer_duplicates})`);
    check.expect(lines.length === 1 && lines[0]?.payment_id === id, `exactly one invoice line for ${id} (saw ${lines.length})`);
    const account = await readAccount(restarted, caller, 'acc_1');
    check.expect(account.payments === 1, `one charge (saw ${account.payments})`);
    return check.outcome(1, `SIGKILL before ack; redelivered; ${stats.consumer_duplicates} duplicate skipped; ${lines.length} invoice line`);
  },
};
