import { downstreamKey } from '../flow/downstream-key.js';
import type { Scope } from '../scope.js';
import type { Lifeline } from './lifeline.js';
import { keyHashOf, type PreparedRequest } from './prepared-request.js';
import type { HandlerContext } from './types.js';

/**
 * What every handler receives. `signal` and `keyHash` are getters, so the AbortController, the lease
 * timer and the key's hash are built only for handlers that read them. They are own, enumerable
 * properties, defined from shared descriptors, so destructuring and `{ ...context }` see them like
 * the rest; a class with two `defineProperty` calls builds in a fraction of the time an object
 * literal with getters takes.
 */
export class ContextBase implements HandlerContext {
  static readonly #signal: PropertyDescriptor = {
    enumerable: true,
    get(this: ContextBase) {
      return this.#lifeline.signal;
    },
  };
  static readonly #keyHash: PropertyDescriptor = {
    enumerable: true,
    get(this: ContextBase) {
      return keyHashOf(this.#prepared);
    },
  };
  readonly #lifeline: Lifeline;
  readonly #prepared: PreparedRequest;
  readonly token: string;
  readonly scope: Scope;
  declare readonly signal: AbortSignal;
  declare readonly keyHash: string;

  constructor(
    prepared: PreparedRequest,
    lifeline: Lifeline,
    readonly fence: number,
    readonly extendLease: (ms?: number) => Promise<void>,
  ) {
    this.#prepared = prepared;
    this.#lifeline = lifeline;
    this.token = prepared.claim.token;
    this.scope = prepared.scope;
    Object.defineProperty(this, 'signal', ContextBase.#signal);
    Object.defineProperty(this, 'keyHash', ContextBase.#keyHash);
  }

  downstreamKey(step: string): Promise<string> {
    return downstreamKey(this.scope, step);
  }
}
