import { exchange } from '../api-client.js';
import { armFault, readAccount } from '../probes.js';
import { expectations, type Scenario } from '../scenario.js';
import { waitForSettled } from './delivery.js';
import { describe, newKey, paymentId, paymentRequest } from './payment-request.js';

/** What differs between the relay's and billing's crash scenarios. */
export interface BackgroundCrash extends Pick<Scenario, 'id' | 'title' | 'expected' | 'proves'> {
  /** Where the process is killed. */
  readonly point: 'relay-after-publish' | 'consumer-before-ack';
  /** How the observed column names the crash and what followed it. */
  readonly story: string;
}

/**
 * A payment with a SIGKILL armed in the background work that delivers its event. After the restart
 * the event is delivered again; billing's inbox must skip the copy: one charge, one invoice line.
 */
export function backgroundCrashScenario(crash: BackgroundCrash): Scenario {
  return {
    id: crash.id,
    title: crash.title,
    expected: crash.expected,
    proves: crash.proves,
    async run({ service, newTenant }) {
      const caller = `${newTenant(crash.point)}:alice`;
      const check = expectations();
      const url = await service.ready();
      // Earlier events must be delivered first: the armed fault fires on the next one.
      await waitForSettled(url, caller);

      await armFault(url, { point: crash.point });
      const exit = service.nextExit();
      const paid = await exchange(url, paymentRequest(caller, newKey(crash.point)));
      check.expect(paid.kind === 'answered' && paid.status === 201, `the payment succeeded (got ${describe(paid)})`);
      const { signal } = await exit;
      check.expect(signal === 'SIGKILL', `the service died of SIGKILL at ${crash.point} (got ${signal})`);

      const restarted = await service.ready();
      const settled = await waitForSettled(restarted, caller, (state) => state.stats.consumer_duplicates >= 1 && state.lines.length >= 1);
      const { stats, lines, unacked } = settled.value;
      const id = paymentId(paid);
      check.expect(
        settled.held,
        `the event came again and billing skipped the copy (unpublished ${stats.outbox_unpublished}, unacked ${unacked}, duplicates ${stats.consumer_duplicates})`,
      );
      check.expect(lines.length === 1 && lines[0]?.payment_id === id, `exactly one invoice line for ${id} (saw ${lines.length})`);
      const account = await readAccount(restarted, caller, 'acc_1');
      check.expect(account.payments === 1, `one charge (saw ${account.payments})`);
      return check.outcome(1, `${crash.story}; ${stats.consumer_duplicates} duplicate skipped; ${lines.length} invoice line`);
    },
  };
}
