import { downstreamKey } from '@oncely/core';
import { PROVIDER_CHARGE_STEP, PROVIDER_PAYMENT } from '../../payments/provider-payment.js';
import { exchange } from '../api-client.js';
import { armFault, readAccount, waitFor } from '../probes.js';
import { expectations, type Scenario } from '../scenario.js';
import { charges, describe, isReplay, newKey, paymentRequest } from './payment-request.js';

interface FlowRecord {
  readonly state: string;
  readonly fence?: number;
  readonly response?: { readonly body?: { readonly id?: string; readonly charge_id?: string } } | null;
}

/** 9 · A flow (debit, provider charge, record the charge) SIGKILLed after the charge; the completer finishes it. */
export const flowCompleted: Scenario = {
  id: 9,
  title: 'flow: crash between charge and final write',
  expected: 'completer finishes; 1 debit, 1 provider charge',
  proves:
    'A payment that debits locally, charges a provider and records the charge runs as an oncely flow: each phase ends at a recovery point, the provider gets a key derived from the client key. Killed after the provider charged, the restarted service\'s completer resumes at the last recovery point: one debit, one provider call, the charge recorded, and the client\'s retry replays that result.',
  async run({ service, newTenant }) {
    const caller = `${newTenant('flow')}:alice`;
    const [tenant = '', principal = ''] = caller.split(':');
    const key = newKey('flow');
    const check = expectations();
    const request = { ...paymentRequest(caller, key), path: '/v1/provider-payments' };
    const url = await service.ready();

    await armFault(url, { point: 'flow-after-charge' });
    const exit = service.nextExit();
    const first = await exchange(url, request);
    const { signal } = await exit;
    check.expect(first.kind === 'no_answer', `the crashing attempt got no answer (got ${describe(first)})`);
    check.expect(signal === 'SIGKILL', `the service died of SIGKILL after the provider charged (got ${signal})`);

    // Nobody retries: the restarted service's completer takes the flow over once its lease lapses.
    const restarted = await service.ready();
    const read = async () => {
      const answer = await exchange(restarted, { method: 'GET', path: `/v1/provider-payments/${encodeURIComponent(key)}`, caller });
      return (answer.kind === 'answered' ? answer.body : { state: 'no answer' }) as FlowRecord;
    };
    const finished = await waitFor(read, (record) => record.state !== 'in_progress', { timeoutMs: 20_000, intervalMs: 200 });
    const record = finished.value;
    check.expect(record.state === 'succeeded', `the completer finished the flow (saw ${record.state})`);
    check.expect(record.fence === 2, `it took the flow over from the dead owner: fence 2 (saw ${record.fence})`);

    const providerKey = await downstreamKey({ tenant, principal, operation: PROVIDER_PAYMENT, key }, PROVIDER_CHARGE_STEP);
    const provider = await exchange(restarted, { method: 'GET', path: `/v1/provider/charges/${providerKey}` });
    const held = (provider.kind === 'answered' ? provider.body : {}) as { calls?: number; charge_id?: string };
    check.expect(held.calls === 1, `the provider was called once, with the derived key (saw ${held.calls ?? 0} calls)`);
    check.expect(record.response?.body?.charge_id === held.charge_id, `the recorded payment names the provider's charge (${record.response?.body?.charge_id} vs ${held.charge_id})`);

    const account = await readAccount(restarted, caller, 'acc_1');
    check.expect(account.payments === 1 && account.balance === '990.00', `debited once (saw ${charges(account)})`);
    const retry = await exchange(restarted, request);
    check.expect(isReplay(retry) && retry.kind === 'answered' && retry.status === 201, `the client's retry replays the 201 (got ${describe(retry)})`);
    const body = retry.kind === 'answered' ? (retry.body as { id?: string; charge_id?: string }) : {};
    check.expect(body.id === record.response?.body?.id && body.charge_id === held.charge_id, 'the replay is the recorded payment and charge');
    return check.outcome(2, `SIGKILL after the charge; completer: ${record.state}, fence ${record.fence}; provider calls ${held.calls ?? 0}; ${charges(account)}; retry ${describe(retry)}`);
  },
};
