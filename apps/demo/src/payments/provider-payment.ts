import type { Flow, FlowResponse } from '@oncely/core';
import type { Queryable } from '../database/database.js';
import { INSERT_PAYMENT_CHARGE } from '../database/sql.js';
import type { ArmedFaults } from '../faults/armed-faults.js';
import { crashNow } from '../faults/crash.js';
import type { Caller } from '../auth/bearer.js';
import { charge, type EnqueuePayment } from './charge.js';
import type { PaymentRequest } from './payment-request.js';

/** The operation provider payments are recorded under. */
export const PROVIDER_PAYMENT = 'payments.provider.v1';
/** The remote step's name: its derived key is what the provider receives. */
export const PROVIDER_CHARGE_STEP = 'provider.charge';

/** What the flow needs from the service. */
export interface ProviderPaymentDeps {
  /** Where the provider listens (the service's own fake one), known once the service listens. */
  readonly providerUrl: () => string;
  readonly faults: ArmedFaults;
  readonly enqueue: EnqueuePayment;
}

/**
 * A payment in three phases: debit the account and record the payment (one local transaction),
 * charge the provider with this step's derived key, then keep the provider's charge id with the
 * payment (a second local transaction). The request handler and the completer run this same code:
 * after a crash, whichever comes first resumes at the last recovery point.
 */
export function providerPayment(deps: ProviderPaymentDeps) {
  return async (flow: Flow<Queryable>): Promise<FlowResponse> => {
    const input = flow.request as PaymentRequest;
    const caller: Caller = { tenant: flow.scope.tenant, principal: flow.scope.principal };
    const debit = await flow.atomic('debit', async (tx) => {
      const outcome = await charge(tx, caller, input, deps.enqueue);
      return outcome.kind === 'charged' ? { paymentId: outcome.payment.id, balance: outcome.balance } : { declined: outcome.balance };
    });
    if ('declined' in debit) {
      return { status: 402, headers: { 'content-type': 'application/problem+json' }, body: { title: 'Insufficient funds', status: 402, balance: debit.declined } };
    }
    const provider = await flow.remote(PROVIDER_CHARGE_STEP, async (key, signal) => {
      const response = await fetch(deps.providerUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ amount: input.amount }),
        signal,
      });
      if (!response.ok) throw new Error(`the provider answered ${response.status}`);
      return { chargeId: ((await response.json()) as { charge_id: string }).charge_id };
    });
    // The demo's crash: the provider charged, the final local write has not happened.
    if (deps.faults.take('flow-after-charge')) crashNow('flow-after-charge');
    await flow.atomic('record-charge', async (tx) => {
      await tx.query(INSERT_PAYMENT_CHARGE, [debit.paymentId, provider.chargeId]);
    });
    return {
      status: 201,
      headers: { location: `/v1/payments/${debit.paymentId}` },
      body: { id: debit.paymentId, account_id: input.account_id, amount: input.amount, currency: input.currency, status: 'succeeded', charge_id: provider.chargeId },
      resourceId: debit.paymentId,
    };
  };
}
