import { exchange } from '../api-client.js';
import { readAccount } from '../probes.js';
import { expectations, type Scenario } from '../scenario.js';
import { charges, describe, isReplay, newKey, paymentRequest } from './payment-request.js';

/** 4 · The same key with a different amount: a client bug, not a retry. */
export const keyReuse: Scenario = {
  id: 4,
  title: 'same key, different body',
  expected: '422; 1 charge of 10.00',
  proves:
    'The key is bound to the request fingerprint: reusing it for 25.00 is refused with 422 instead of charging again or replaying the 10.00 answer as if it were the new one.',
  async run({ service, newTenant }) {
    const caller = `${newTenant('reuse')}:alice`;
    const key = newKey('reuse');
    const check = expectations();
    const url = await service.ready();

    const first = await exchange(url, paymentRequest(caller, key, '10.00'));
    const changed = await exchange(url, paymentRequest(caller, key, '25.00'));
    const again = await exchange(url, paymentRequest(caller, key, '10.00'));
    check.expect(first.kind === 'answered' && first.status === 201, `the first charge succeeded (got ${describe(first)})`);
    check.expect(changed.kind === 'answered' && changed.status === 422, `the changed body was refused with 422 (got ${describe(changed)})`);
    check.expect(
      changed.kind === 'answered' && String(changed.headers['content-type']).startsWith('application/problem+json'),
      'the refusal is application/problem+json',
    );
    check.expect(isReplay(again) && again.kind === 'answered' && again.status === 201, `the original body still replays (got ${describe(again)})`);
    const final = await readAccount(url, caller, 'acc_1');
    check.expect(final.payments === 1 && final.balance === '990.00', `one charge of 10.00 (saw ${charges(final)})`);
    return check.outcome(3, `${describe(first)}, then ${describe(changed)}, then ${describe(again)}; ${charges(final)}`);
  },
};
