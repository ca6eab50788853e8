import { type FlowBody, flowRunner } from '../flow/run-flow.js';
import { integerOption } from '../options/option-checks.js';
import { toScope } from '../scope.js';
import { storageGuard } from '../storage/storage-call.js';
import type { IdempotencyStore } from '../store.js';
import { withEvents } from './engine-events.js';
import { engineOptions } from './engine-options.js';
import { leaseMode } from './lease-mode.js';
import { leaseTokens, requestPreparer } from './prepared-request.js';
import { transactionMode } from './transaction-mode.js';
import type { Idempotency, IdempotencyOptions } from './types.js';

/**
 * Creates the idempotency engine over a store. All validation happens here and before any store
 * call: a bad key, scope or payload throws a coded {@link OncelyError} and touches nothing.
 */
export function createIdempotency<S extends IdempotencyStore>(options: IdempotencyOptions<S>): Idempotency<S> {
  const engine = withEvents(engineOptions(options));
  const { store, clock, emit } = engine;
  const prepare = requestPreparer(engine);
  const storageCall = storageGuard(store.name);
  const { leaseMs, retentionMs, replay, fingerprint } = engine;
  const flows = flowRunner({ store, leaseMs, retentionMs, replay, fingerprint, clock, nextToken: leaseTokens() });
  return {
    store,
    run: leaseMode(engine, prepare),
    runInTransaction: transactionMode(engine, prepare),
    flow: (request, body) => flows.run(request, body as unknown as FlowBody<never, never>),
    async get(input) {
      const scope = toScope(input);
      return storageCall('get', () => store.get(scope));
    },
    async purgeExpired(limit = 1_000) {
      integerOption('oncely: purgeExpired limit', limit);
      const count = await storageCall('purgeExpired', () => store.purgeExpired(limit));
      emit({ type: 'purged', at: clock.now(), count });
      return count;
    },
  };
}
