import { type Clock, systemClock } from '../clock.js';
import type { EngineEvent, EventListener } from '../events.js';
import type { FingerprintOptions } from '../fingerprint/fingerprint.js';
import { integerOption, invalidOption } from '../options/option-checks.js';
import { defaultReplayPolicy, type ReplayPolicy } from '../replay-policy.js';
import type { IdempotencyStore } from '../store.js';
import type { IdempotencyOptions } from './types.js';

/** The engine's options, checked once at creation, with their defaults filled in. */
export interface EngineOptions<S extends IdempotencyStore> {
  readonly store: S;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly maxStoredBytes: number;
  readonly oversize: 'omit' | 'reference';
  readonly rebuild: IdempotencyOptions<S>['rebuild'];
  readonly replay: ReplayPolicy;
  readonly onEvent: EventListener<EngineEvent> | undefined;
  readonly fingerprint: FingerprintOptions | undefined;
  readonly clock: Clock;
}

/** Checks the options of `createIdempotency`; a bad one throws `invalid_option` before anything is touched. */
export function engineOptions<S extends IdempotencyStore>(options: IdempotencyOptions<S>): EngineOptions<S> {
  const { store, onEvent, clock = systemClock, replay = defaultReplayPolicy } = options;
  if (!store || typeof store.claim !== 'function') {
    throw invalidOption('oncely', 'createIdempotency needs a store');
  }
  const leaseMs = integerOption('oncely: leaseMs', options.leaseMs ?? 30_000);
  const retentionMs = integerOption('oncely: retentionMs', options.retentionMs ?? 86_400_000);
  const maxStoredBytes = integerOption('oncely: maxStoredBytes', options.maxStoredBytes ?? 1_048_576);
  const oversize = options.oversize ?? 'omit';
  if (retentionMs < leaseMs) {
    throw invalidOption('oncely', 'retentionMs must be at least leaseMs');
  }
  if (oversize === 'reference' && !options.rebuild) {
    throw invalidOption('oncely', 'the reference strategy needs a rebuild function');
  }
  return {
    store,
    leaseMs,
    retentionMs,
    maxStoredBytes,
    oversize,
    rebuild: options.rebuild,
    replay,
    onEvent,
    fingerprint: options.fingerprint,
    clock,
  };
}
