import { createIdempotency } from '@oncely/core';
import { type PostgresDb, postgresStore } from '@oncely/postgres';
import { oncelyLeaseSubject } from '../subjects/oncely-subject.js';
import { type Operations, subjectOperations } from '../subjects/operations.js';
import type { PaymentEffect } from '../subjects/payment-effect.js';
import type { IdempotentSubject } from '../subjects/subject.js';
import { businessOnlyOperations, type RunTransaction } from './business-transaction.js';
import { oncelyTransactionalSubject } from './oncely-transactional.js';
import { type Queryable, rawLeaseOperations } from './raw-lease.js';
import { rawTransactionalOperations } from './raw-transactional.js';
import { recordFloorOperations } from './record-floor.js';
import { SCHEMA } from './schema.js';

/** One database as the contenders see it: oncely's handle, the raw driver, a plain transaction. */
export interface DatabaseHandles {
  readonly db: PostgresDb;
  readonly raw: Queryable;
  readonly transaction: RunTransaction;
}

/** The seven PostgreSQL contenders, named for the backend they run on. */
export interface PostgresContenders {
  readonly rawLease: Operations;
  readonly oncelyLease: Operations & { readonly subject: IdempotentSubject };
  readonly businessOnly: Operations;
  /** The business transaction with the raw claim and complete in it: transactional mode's work without oncely. */
  readonly rawTransactional: Operations;
  /** The bare transaction whose one statement also inserts the completed record: the floor of a record in the transaction. */
  readonly recordFloor: Operations;
  readonly oncelyTransactional: Operations & { readonly subject: IdempotentSubject };
  /** Transactional mode with `lockClaim`: an advisory lock with BEGIN, the record written once with COMMIT. */
  readonly oncelyLockClaim: Operations & { readonly subject: IdempotentSubject };
}

/** Builds the contenders over `handles`; `label` names the backend (`pg`, `PGlite`). */
export function postgresContenders(label: string, handles: DatabaseHandles, effect: PaymentEffect): PostgresContenders {
  const store = postgresStore({ db: handles.db, schema: SCHEMA });
  const lease = oncelyLeaseSubject(`oncely lease mode (${label})`, createIdempotency({ store }));
  const transactional = oncelyTransactionalSubject(`oncely transactional (${label})`, createIdempotency({ store }));
  const lockClaim = oncelyTransactionalSubject(
    `oncely transactional, lockClaim (${label})`,
    createIdempotency({ store: postgresStore({ db: handles.db, schema: SCHEMA, lockClaim: true }) }),
  );
  return {
    rawLease: rawLeaseOperations(handles.raw, effect, `raw ${label}, same statements`),
    oncelyLease: { ...subjectOperations(lease, effect), subject: lease },
    businessOnly: businessOnlyOperations(handles.transaction, effect, `business transaction alone (${label})`),
    rawTransactional: rawTransactionalOperations(handles.transaction, effect, `raw ${label} transaction, same statements`),
    recordFloor: recordFloorOperations(handles.transaction, effect, `business transaction + its record row (${label}), the floor`),
    oncelyTransactional: { ...subjectOperations(transactional, effect), subject: transactional },
    oncelyLockClaim: { ...subjectOperations(lockClaim, effect), subject: lockClaim },
  };
}
