import { exchange } from '../api-client.js';
import { lookupKey, readAccount } from '../probes.js';
import { retryRequest } from '../retrying-client.js';
import { expectations, type Scenario } from '../scenario.js';
import { charges, describe, isReplay, newKey, paymentId, paymentRequest } from './payment-request.js';

/** 2 · The payment commits, then the service destroys the socket without answering. */
export const dropResponse: Scenario = {
  id: 2,
  title: 'commit, then response dropped',
  expected: 'retry replays; 1 charge',
  proves:
    'The client saw a dead connection, yet the charge committed. The retry with the same key gets the stored 201 (Idempotent-Replayed: true) with the same payment id, and nothing is charged twice.',
  async run({ service, newTenant }) {
    const caller = `${newTenant('drop')}:alice`;
    const key = newKey('drop');
    const check = expectations();
    const url = await service.ready();

    const first = await exchange(url, { ...paymentRequest(caller, key), fault: 'drop-response' });
    check.expect(first.kind === 'no_answer', `the first attempt got no answer (got ${describe(first)})`);
    const record = await lookupKey(url, caller, key);
    check.expect(record.state === 'succeeded', `the record says succeeded before any retry (saw ${record.state})`);
    const afterDrop = await readAccount(url, caller, 'acc_1');
    check.expect(afterDrop.payments === 1, `the charge committed despite the lost answer (saw ${afterDrop.payments})`);

    const retried = await retryRequest(url, paymentRequest(caller, key));
    const last = retried.attempts.at(-1);
    const replayedId = paymentId(last);
    check.expect(isReplay(last!) && last?.kind === 'answered' && last.status === 201, `the retry was replayed (got ${describe(last)})`);
    check.expect(
      replayedId !== undefined && 'resourceId' in record && replayedId === record.resourceId,
      `the replay names the committed payment (${replayedId} vs ${'resourceId' in record ? record.resourceId : 'none'})`,
    );
    const final = await readAccount(url, caller, 'acc_1');
    check.expect(final.payments === 1 && final.balance === '990.00', `charged once (saw ${charges(final)})`);
    return check.outcome(1 + retried.attempts.length, `no answer; retry ${describe(last)}, same id; ${charges(final)}`);
  },
};
