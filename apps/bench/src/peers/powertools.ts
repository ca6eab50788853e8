import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import { createClient } from '@redis/client';
import { type IdempotentSubject, PAYMENT_REQUEST, type PaymentResponse } from '../subjects/subject.js';

interface PaymentEvent {
  readonly idempotencyKey: string;
  readonly body: typeof PAYMENT_REQUEST;
  /** Routes the call to its effect; outside both JMESPath selections, so it never enters a hash. */
  readonly callId: number;
}

/**
 * `@aws-lambda-powertools/idempotency` with its cache (Redis) persistence layer on `@redis/client`,
 * wrapping a handler with `makeIdempotent` and calling it as Lambda would, with a context that
 * reports the remaining time (Powertools derives the in-progress expiry from it). Payload
 * validation stays at its default (off); see the comment on the config.
 */
export async function powertoolsSubject(redisUrl: string, prefix: string): Promise<IdempotentSubject> {
  const client = createClient({ url: redisUrl });
  // Without a listener a dropped socket crashes the process; the failing call reports it instead.
  client.on('error', () => undefined);
  await client.connect();
  const persistenceStore = new CachePersistenceLayer({ client });
  // No payloadValidationJmesPath: in 2.35.0 the cache layer rewrites a completed record without the
  // payload hash, so with validation on every replay throws IdempotencyValidationError.
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'idempotencyKey', expiresAfterSeconds: 86_400 });
  const effects = new Map<number, () => Promise<PaymentResponse>>();
  const ran = new Set<number>();
  const handler = makeIdempotent(
    async (event: PaymentEvent, _context: unknown): Promise<PaymentResponse> => {
      ran.add(event.callId);
      return effects.get(event.callId)!();
    },
    { persistenceStore, config, keyPrefix: `${prefix}:powertools` },
  );
  const context = { getRemainingTimeInMillis: () => 30_000, functionName: 'bench', awsRequestId: 'bench' };
  let nextCallId = 0;
  return {
    name: '@aws-lambda-powertools/idempotency',
    async execute(key, effect) {
      const callId = nextCallId++;
      effects.set(callId, effect);
      try {
        await handler({ idempotencyKey: key, body: { ...PAYMENT_REQUEST }, callId }, context);
        return { kind: ran.has(callId) ? 'executed' : 'replayed' };
      } catch (error) {
        const name = error instanceof Error ? error.name : '';
        if (name === 'IdempotencyAlreadyInProgressError') return { kind: 'in_progress' };
        throw error;
      } finally {
        effects.delete(callId);
        ran.delete(callId);
      }
    },
    settle: async () => undefined,
    close: async () => {
      await client.close();
    },
  };
}
