import { exchange } from '../api-client.js';
import { lookupKey, readAccount, waitFor } from '../probes.js';
import { expectations, type Scenario } from '../scenario.js';
import { charges, describe, isReplay, newKey, paymentId, paymentRequest } from './payment-request.js';

/** Retention for this scenario only: long enough for the first answer, short enough to wait out. */
const SHORT_RETENTION_MS = 1_500;

/** Replaces flag values in an argv (each flag must already be there). */
function withFlags(args: readonly string[], values: Readonly<Record<string, string>>): string[] {
  const next = [...args];
  for (const [flag, value] of Object.entries(values)) {
    const index = next.indexOf(flag);
    if (index < 0) next.push(flag, value);
    else next[index + 1] = value;
  }
  return next;
}

/** 7 · The record expires (retention 1.5 s for this run), then the retry arrives. */
export const expiredRecord: Scenario = {
  id: 7,
  title: 'record expired, late retry',
  expected: 'executes again: 2 charges (retention < retry window)',
  proves:
    'Expiry changes semantics, as documented: once the record is gone the key is a new operation and the late retry charges again. Retention must cover the clients’ whole retry window (24 h by default).',
  async run({ service, serviceArgs, newTenant }) {
    const caller = `${newTenant('expiry')}:alice`;
    const key = newKey('expiry');
    const check = expectations();
    const url = await service.restart(withFlags(serviceArgs, { '--retention-ms': String(SHORT_RETENTION_MS), '--lease-ms': '1000' }));
    try {
      const first = await exchange(url, paymentRequest(caller, key));
      const right = await exchange(url, paymentRequest(caller, key));
      check.expect(first.kind === 'answered' && first.status === 201, `the first charge succeeded (got ${describe(first)})`);
      check.expect(isReplay(right), `a retry within retention replays (got ${describe(right)})`);
      const gone = await waitFor(
        () => lookupKey(url, caller, key),
        (record) => record.state === 'absent',
        { timeoutMs: 15_000, intervalMs: 250 },
      );
      check.expect(gone.held, `the record expired (lookup still says ${gone.value.state})`);
      const late = await exchange(url, paymentRequest(caller, key));
      check.expect(
        late.kind === 'answered' && late.status === 201 && !isReplay(late),
        `the late retry executed as a new operation (got ${describe(late)})`,
      );
      check.expect(paymentId(late) !== paymentId(first), 'the late retry created a second payment');
      const final = await readAccount(url, caller, 'acc_1');
      check.expect(final.payments === 2 && final.balance === '980.00', `charged twice (saw ${charges(final)})`);
      return check.outcome(3, `${describe(first)}, ${describe(right)}, expired, late ${describe(late)}; ${charges(final)}`);
    } finally {
      await service.restart(serviceArgs);
    }
  },
};
