import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange } from '../src/scenarios/api-client.js';
import { type RunningService, startService } from '../src/service/start-service.js';
import { serviceConfig, temporaryDataDir } from './support/scenario-suite.js';

const data = temporaryDataDir('model');
let service: RunningService | undefined;
let url = '';

/** One step a client can take: a new payment, a retry of an earlier one, or an earlier key with another amount. */
type Step =
  | { readonly kind: 'new'; readonly cents: number }
  | { readonly kind: 'retry'; readonly pick: number }
  | { readonly kind: 'reuse'; readonly pick: number; readonly cents: number };

const cents = fc.integer({ min: 1, max: 60_000 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('new' as const), cents }),
  fc.record({ kind: fc.constant('retry' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('reuse' as const), pick: fc.nat(), cents }),
);

const toAmount = (value: number) => `${Math.floor(value / 100)}.${String(value % 100).padStart(2, '0')}`;
const toCents = (amount: string) => Number.parseInt(amount.replace('.', ''), 10);

beforeAll(async () => {
  service = await startService({
    ...serviceConfig({ port: 7312, store: 'pglite', database: { kind: 'pglite', dataDir: data.path } }),
    reset: true,
  });
  url = `http://127.0.0.1:${service.port}`;
});

afterAll(async () => {
  await service?.close();
  data.remove();
});

describe('payments against a model (fast-check, real HTTP, PGlite)', () => {
  it('any mix of new payments, retries and reused keys charges each key at most once, and the balance says so', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 10 }), async (steps) => {
        const caller = `model-${Date.now().toString(36)}-${++run}:alice`;
        const keys: { key: string; cents: number; status: number; id: string | undefined }[] = [];
        let balance = 100_000;
        let charges = 0;
        for (const next of steps) {
          const earlier = next.kind === 'new' || keys.length === 0 ? undefined : keys[next.pick % keys.length]!;
          const key = earlier?.key ?? `k-${keys.length}`;
          const amount = next.kind === 'retry' ? (earlier?.cents ?? 0) : next.cents;
          if (amount === 0) continue;
          const answer = await exchange(url, {
            method: 'POST',
            path: '/v1/payments',
            caller,
            key,
            body: { account_id: 'acc_1', amount: toAmount(amount), currency: 'USD' },
          });
          if (answer.kind !== 'answered') throw new Error(`no answer: ${answer.error.message}`);
          const id = (answer.body as { id?: string }).id;
          if (!earlier) {
            // A new key executes: charged if the balance covers it, otherwise a 402 that is stored.
            const expected = amount <= balance ? 201 : 402;
            expect(answer.status).toBe(expected);
            if (expected === 201) {
              balance -= amount;
              charges += 1;
            }
            keys.push({ key, cents: amount, status: expected, id });
          } else if (amount === earlier.cents) {
            // The same request again: the stored outcome, never a second execution.
            expect(answer.status).toBe(earlier.status);
            expect(answer.headers['idempotent-replayed']).toBe('true');
            expect(id).toBe(earlier.id);
          } else {
            expect(answer.status).toBe(422);
          }
        }
        const account = await exchange(url, { method: 'GET', path: '/v1/accounts/acc_1', caller });
        if (account.kind !== 'answered') throw new Error('no answer for the account');
        const body = account.body as { balance: string; payments: number };
        expect(toCents(body.balance)).toBe(balance);
        expect(body.payments).toBe(charges);
      }),
      { numRuns: 15 },
    );
  });
});
