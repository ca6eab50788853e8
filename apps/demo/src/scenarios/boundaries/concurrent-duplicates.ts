import { readAccount } from '../probes.js';
import { retryRequest } from '../retrying-client.js';
import { expectations, type Scenario } from '../scenario.js';
import { charges, isReplay, newKey, paymentId, paymentRequest } from './payment-request.js';

/** Concurrent duplicates sent at once. */
const DUPLICATES = 10;

/** 3 · Ten requests with the same key and body at the same moment; the first holds its transaction 300 ms. */
export const concurrentDuplicates: Scenario = {
  id: 3,
  title: 'concurrent same key and body',
  expected: '1 executes, 9 replay; 1 charge',
  proves:
    'The storage uniqueness constraint, not a process-local lock, picks one winner: the others wait on the key (or get 409 and retry) and replay its result. One charge, one payment id.',
  async run({ service, newTenant }) {
    const caller = `${newTenant('race')}:alice`;
    const key = newKey('race');
    const check = expectations();
    const url = await service.ready();

    // Every copy asks for the delay: whichever wins holds its transaction open while the rest arrive.
    const runs = await Promise.all(
      Array.from({ length: DUPLICATES }, () => retryRequest(url, { ...paymentRequest(caller, key), fault: 'delay=300' })),
    );
    const finals = runs.map((run) => run.attempts.at(-1));
    const created = finals.filter((last) => last?.kind === 'answered' && last.status === 201);
    const executed = created.filter((last) => !isReplay(last!)).length;
    const ids = new Set(finals.map(paymentId));
    const attempts = runs.reduce((sum, run) => sum + run.attempts.length, 0);
    check.expect(created.length === DUPLICATES, `every duplicate ended with 201 (${created.length} of ${DUPLICATES})`);
    check.expect(executed === 1, `exactly one executed (${executed})`);
    check.expect(ids.size === 1 && !ids.has(undefined), `one payment id for all (${[...ids].join(', ')})`);
    const final = await readAccount(url, caller, 'acc_1');
    check.expect(final.payments === 1 && final.balance === '990.00', `charged once (saw ${charges(final)})`);
    return check.outcome(attempts, `${executed} executed, ${created.length - executed} replayed; ${charges(final)}`);
  },
};
