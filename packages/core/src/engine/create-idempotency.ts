import { toStorageError } from '../errors.js';
import { toScope } from '../scope.js';
import type { IdempotencyStore } from '../store.js';
import { withEvents } from './engine-events.js';
import { engineOptions, positiveInteger } from './engine-options.js';
import { leaseMode } from './lease-mode.js';
import { requestPreparer } from './prepared-request.js';
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
  return {
    store,
    run: leaseMode(engine, prepare),
    runInTransaction: transactionMode(engine, prepare),
    async get(input) {
      const scope = toScope(input);
      try {
        return await store.get(scope);
      } catch (error) {
        throw toStorageError(store.name, 'get', error);
      }
    },
    async purgeExpired(limit = 1_000) {
      positiveInteger('purgeExpired limit', limit);
      let count: number;
      try {
        count = await store.purgeExpired(limit);
      } catch (error) {
        throw toStorageError(store.name, 'purgeExpired', error);
      }
      emit({ type: 'purged', at: clock.now(), count });
      return count;
    },
  };
}
