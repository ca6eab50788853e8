/** Where the idempotency records live: `pglite` and `postgres` keep them with the business data. */
export type StoreKind = 'pglite' | 'postgres' | 'redis';

/** The database holding accounts, payments, the outbox and the billing inbox. */
export type DatabaseTarget =
  | { readonly kind: 'pglite'; readonly dataDir: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string };

/** Where idempotency records live: in the business database (one transaction) or in Redis (lease mode). */
export type RecordsTarget =
  | { readonly kind: 'database' }
  | { readonly kind: 'redis'; readonly url: string; readonly prefix: string };

/** Everything the payments service needs to start. */
export interface ServiceConfig {
  readonly host: string;
  readonly port: number;
  readonly store: StoreKind;
  readonly database: DatabaseTarget;
  readonly records: RecordsTarget;
  /** Honour `Oncely-Fault` and `POST /v1/faults`. */
  readonly faults: boolean;
  /** Wipe the demo's data before starting. */
  readonly reset: boolean;
  /** How long an in-progress record is owned before a retry may take it over (lease mode). */
  readonly leaseMs: number;
  /** How long idempotency records are kept. */
  readonly retentionMs: number;
  /** How long the outbox relay holds a claimed event before a restarted relay may publish it again. */
  readonly relayLeaseMs: number;
}
