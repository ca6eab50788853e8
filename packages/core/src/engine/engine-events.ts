import { emitSafely, type EngineEvent, type IdempotencyEvent } from '../events.js';
import type { IdempotencyStore } from '../store.js';
import type { EngineOptions } from './engine-options.js';
import { keyHashOf, type PreparedRequest } from './prepared-request.js';

/** An idempotency event without what the engine fills in: time, tenant, operation and key hash. */
export type EngineEventBody = IdempotencyEvent extends infer E
  ? E extends unknown
    ? Omit<E, 'at' | 'tenant' | 'operation' | 'keyHash'>
    : never
  : never;

/** The engine's checked options and its event outlets, shared by every part of one engine. */
export interface EngineParts<S extends IdempotencyStore> extends EngineOptions<S> {
  /** Sends an event to `onEvent`, ignoring what the listener throws. */
  readonly emit: (event: EngineEvent) => void;
  /** Reports an event about one request; without a listener it builds nothing, not even the key hash. */
  readonly report: (prepared: PreparedRequest, body: EngineEventBody) => void;
}

/** Adds the event outlets to the checked options. */
export function withEvents<S extends IdempotencyStore>(options: EngineOptions<S>): EngineParts<S> {
  const { onEvent, clock } = options;
  const emit = (event: EngineEvent) => emitSafely(onEvent, event);
  const report = (prepared: PreparedRequest, body: EngineEventBody) => {
    if (!onEvent) return;
    const { tenant, operation } = prepared.scope;
    emit({ tenant, operation, keyHash: keyHashOf(prepared), at: clock.now(), ...body } as IdempotencyEvent);
  };
  return { ...options, emit, report };
}
