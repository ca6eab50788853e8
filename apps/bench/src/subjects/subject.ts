/** The response every implementation stores and replays: a created payment. */
export interface PaymentResponse {
  readonly status: number;
  readonly body: { readonly id: string; readonly amount: number; readonly currency: string };
}

/** The request body every implementation fingerprints. */
export const PAYMENT_REQUEST = { amount: 1000, currency: 'EUR', customer: 'cus_bench' } as const;

/** What one call ended as, seen from the caller. */
export type CallOutcome =
  | { readonly kind: 'executed' }
  | { readonly kind: 'replayed' }
  /** The library answered "still in progress" (a 409 in HTTP terms): nothing ran, nothing replayed. */
  | { readonly kind: 'in_progress' }
  | { readonly kind: 'rejected'; readonly reason: string };

/** One idempotency implementation, driven the same way as every other. */
export interface IdempotentSubject {
  readonly name: string;
  /** One call with the client's `key`: runs `effect` at most once per key, or replays its response. */
  execute(key: string, effect: () => Promise<PaymentResponse>): Promise<CallOutcome>;
  /** Waits for writes the library left running after it answered (fire-and-forget completion). */
  settle(): Promise<void>;
  close(): Promise<void>;
}
