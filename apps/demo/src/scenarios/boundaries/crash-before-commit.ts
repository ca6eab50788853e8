import { exchange } from '../api-client.js';
import { lookupKey, readAccount } from '../probes.js';
import { retryRequest } from '../retrying-client.js';
import { expectations, type Scenario } from '../scenario.js';
import { charges, describe, isReplay, newKey, paymentRequest } from './payment-request.js';

/** 1 · The process is SIGKILLed inside the open transaction, after every write and before COMMIT. */
export const crashBeforeCommit: Scenario = {
  id: 1,
  title: 'crash before commit',
  expected: 'rolled back; retry charges once',
  proves:
    'A crash inside the transaction leaves no trace: no charge, no record. The retry with the same key executes, and the account is charged exactly once.',
  async run({ service, newTenant }) {
    const caller = `${newTenant('crash')}:alice`;
    const key = newKey('crash');
    const check = expectations();
    const url = await service.ready();

    const exit = service.nextExit();
    const first = await exchange(url, { ...paymentRequest(caller, key), fault: 'crash-before-commit' });
    const { signal } = await exit;
    check.expect(first.kind === 'no_answer', `the crashing attempt got no answer (got ${describe(first)})`);
    check.expect(signal === 'SIGKILL', `the service died of SIGKILL (got ${signal})`);

    const restarted = await service.ready();
    const afterCrash = await readAccount(restarted, caller, 'acc_1');
    const record = await lookupKey(restarted, caller, key);
    check.expect(afterCrash.payments === 0 && afterCrash.balance === '1000.00', `nothing committed (saw ${charges(afterCrash)})`);
    // Lease mode (Redis) keeps an in-progress record until its lease lapses; transactions keep nothing.
    check.expect(record.state === 'absent' || record.state === 'in_progress', `no completed record (saw ${record.state})`);

    const retried = await retryRequest(restarted, paymentRequest(caller, key));
    const last = retried.attempts.at(-1);
    check.expect(last?.kind === 'answered' && last.status === 201 && !isReplay(last), `the retry executed: 201 (got ${describe(last)})`);
    const final = await readAccount(restarted, caller, 'acc_1');
    check.expect(final.payments === 1 && final.balance === '990.00', `charged once (saw ${charges(final)})`);
    return check.outcome(
      1 + retried.attempts.length,
      `SIGKILL; after restart ${afterCrash.payments} charges; retry ${describe(last)}; ${charges(final)}`,
    );
  },
};
