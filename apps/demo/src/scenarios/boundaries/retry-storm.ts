import type { RetryOutcome, RetryPolicyOptions } from '@oncely/core/retry';
import { type Exchange, exchange } from '../api-client.js';
import { peakArrivals } from '../arrival-spread.js';
import { armFault, readAccount } from '../probes.js';
import { retryRequest } from '../retrying-client.js';
import { expectations, type Scenario } from '../scenario.js';
import { newKey, paymentRequest } from './payment-request.js';

const CLIENTS = 60;
const OUTAGE_MS = 2_500;
const WINDOW_MS = 100;
/** Jitter is judged to spread the load when its busiest window carries at most this share of the lockstep one. */
const MAX_PEAK_RATIO = 0.5;
const POLICY: RetryPolicyOptions<Exchange> = { maxAttempts: 8, baseMs: 1_000, capMs: 4_000, deadlineMs: 40_000, attemptTimeoutMs: 10_000 };
/** `fullJitter` with its random source pinned near 1: plain exponential backoff, every client in lockstep. */
const NO_JITTER = () => 0.999_999;

/** What one storm of retries did. */
interface Storm {
  readonly peak: number;
  readonly retries: number;
  readonly succeeded: number;
  /** How each client that did not succeed ended, so a failure says why. */
  readonly unsuccessful: readonly string[];
  readonly charges: number;
  readonly balanceTotal: string;
}

/**
 * One unmeasured burst (unauthenticated, so refused with 401 and nothing is charged), so neither
 * measured burst is stretched by a cold process: the comparison is of backoff, not of warm-up.
 */
async function warmUp(url: string): Promise<void> {
  await Promise.all(Array.from({ length: CLIENTS }, () => exchange(url, { ...paymentRequest('', newKey('warm')), caller: undefined })));
}

async function storm(url: string, tenant: string, random: () => number): Promise<Storm> {
  const caller = `${tenant}:alice`;
  await armFault(url, { point: 'outage', duration_ms: OUTAGE_MS });
  const runs = await Promise.all(
    Array.from({ length: CLIENTS }, (_, index) =>
      retryRequest(url, paymentRequest(caller, newKey('storm'), '1.00', `acc_${(index % 5) + 1}`), { ...POLICY, random }),
    ),
  );
  const succeeded = runs.filter((run) => run.outcome.outcome === 'succeeded').length;
  const unsuccessful = runs.flatMap(({ outcome }) => (outcome.outcome === 'succeeded' ? [] : [describeEnd(outcome)]));
  // Measured where the load starts: when each retry was sent (the service's own stamps would include its event-loop stalls).
  const retries = runs.flatMap((run) => run.attempts.slice(1).map((attempt) => attempt.sentAt));
  const accounts = await Promise.all(['acc_1', 'acc_2', 'acc_3', 'acc_4', 'acc_5'].map((id) => readAccount(url, caller, id)));
  // Balances are decimal strings with two places: summed as integer cents, never as floats.
  const cents = accounts.reduce((sum, account) => sum + Number.parseInt(account.balance.replace('.', ''), 10), 0);
  return {
    peak: peakArrivals(retries, WINDOW_MS),
    retries: retries.length,
    succeeded,
    unsuccessful,
    charges: accounts.reduce((sum, account) => sum + account.payments, 0),
    balanceTotal: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`,
  };
}

/** One line on how a client's retries ended without success: the limit that stopped them and the last answer. */
function describeEnd(outcome: Exclude<RetryOutcome<Exchange>, { outcome: 'succeeded' }>): string {
  const last = outcome.outcome === 'failed' ? outcome.error : outcome.lastError;
  const answer =
    last instanceof Error
      ? last.message
      : typeof last === 'object' && last !== null
        ? JSON.stringify(last, ['kind', 'status', 'detail']).slice(0, 120)
        : String(last);
  return `${outcome.outcome} after ${outcome.attempts} attempts (${outcome.stoppedBy}, last ${answer})`;
}

/** 8 · The card network fails for 2.5 s; 60 clients retry with core's `retry`, in lockstep and then with full jitter. */
export const retryStorm: Scenario = {
  id: 8,
  title: 'dependency down: jitter spreads retries',
  expected: `jitter peak <= ${MAX_PEAK_RATIO} x lockstep peak; one charge per client`,
  proves:
    'Without jitter every client retries at the same instants, so the recovering dependency takes the whole herd at once. Full jitter spreads the same retries out; every client still ends with exactly one charge.',
  async run({ service, newTenant }) {
    const check = expectations();
    const url = await service.ready();
    await warmUp(url);
    const lockstep = await storm(url, newTenant('storm-lockstep'), NO_JITTER);
    const jittered = await storm(url, newTenant('storm-jitter'), Math.random);
    for (const [name, run] of [
      ['lockstep', lockstep],
      ['jitter', jittered],
    ] as const) {
      check.expect(
        run.succeeded === CLIENTS,
        `${name}: every client succeeded (${run.succeeded} of ${CLIENTS}; the others: ${run.unsuccessful.join('; ')})`,
      );
      check.expect(run.charges === CLIENTS && run.balanceTotal === `${5_000 - CLIENTS}.00`, `${name}: one charge per client (${run.charges}, total ${run.balanceTotal})`);
    }
    check.expect(lockstep.retries > 0 && jittered.retries > 0, 'the outage caused retries');
    check.expect(
      jittered.peak <= lockstep.peak * MAX_PEAK_RATIO,
      `jitter spread the retries (peak ${jittered.peak} vs ${lockstep.peak} per ${WINDOW_MS} ms)`,
    );
    return check.outcome(
      lockstep.retries + jittered.retries + 2 * CLIENTS,
      `peak retries/${WINDOW_MS} ms: lockstep ${lockstep.peak}, jitter ${jittered.peak}; ${lockstep.charges}+${jittered.charges} charges`,
    );
  },
};
