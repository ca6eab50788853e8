import type { FingerprintOptions } from '../fingerprint/fingerprint.js';

/** One attempt at a logical operation. */
export interface IdempotencyRequest {
  /** From the authenticated identity, never from the key. Required. */
  readonly tenant: string;
  readonly principal?: string;
  /** Stable semantic name with a version, e.g. `payments.create.v1`. */
  readonly operation: string;
  /** The client's idempotency key: 1–255 visible ASCII characters. */
  readonly key: string;
  /** The request as it affects the operation; fingerprinted with {@link FingerprintOptions}. */
  readonly request: unknown;
  /** Per-request fingerprint options; replaces the engine's default. */
  readonly fingerprint?: FingerprintOptions;
  /** The caller's cancellation (a closed HTTP connection); forwarded to the handler's signal, read only once the handler reads that. */
  readonly signal?: AbortSignal;
  /** Largest body stored for this request (UTF-8 bytes of its JSON); replaces the engine's `maxStoredBytes`. */
  readonly maxStoredBytes?: number;
}
