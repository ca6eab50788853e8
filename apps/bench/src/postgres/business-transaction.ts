import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import type postgres from 'postgres';
import type { Operations } from '../subjects/operations.js';
import type { PaymentEffect } from '../subjects/payment-effect.js';
import type { PaymentResponse } from '../subjects/subject.js';
import { PAYMENTS } from './schema.js';

/** The business write every transactional contender performs: one payment row. */
export const INSERT_PAYMENT = `INSERT INTO ${PAYMENTS} (id, idempotency_key, amount, currency) VALUES ($1, $2, $3, $4)`;

/** Parameters of {@link INSERT_PAYMENT} for a handler's response. */
export const paymentParams = (key: string, response: PaymentResponse) => [
  response.body.id,
  key,
  response.body.amount,
  response.body.currency,
];

/** Runs `work` in one transaction on whichever database the bench is given. */
export type RunTransaction = (work: (query: (text: string, params: unknown[]) => Promise<unknown>) => Promise<void>) => Promise<void>;

/** BEGIN, the work, COMMIT on a connection checked out of `pool` (ROLLBACK when the work throws). */
export function pgTransaction(pool: pg.Pool): RunTransaction {
  return async (work) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      try {
        await work((text, params) => client.query(text, params));
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    } finally {
      client.release();
    }
  };
}

/** postgres.js's own `sql.begin`: BEGIN, the work, COMMIT, each waited on. */
export function postgresJsTransaction(sql: postgres.Sql): RunTransaction {
  return async (work) => {
    await sql.begin((tx) => work((text, params) => tx.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true })));
  };
}

/** PGlite's own transaction helper. */
export function pgliteTransaction(db: PGlite): RunTransaction {
  return (work) => db.transaction(async (tx) => work((text, params) => tx.query(text, params)));
}

/**
 * The business transaction without oncely: the same payment insert and nothing else. There is no
 * replay without an idempotency layer, so it offers first requests only.
 */
export function businessOnlyOperations(run: RunTransaction, effect: PaymentEffect, name: string): Operations {
  return firstRequestsOnly(name, 'a transaction without an idempotency layer has no replay', (key) =>
    run(async (query) => {
      const response = await effect.forKey(key)();
      await query(INSERT_PAYMENT, paymentParams(key, response));
    }),
  );
}

/** A contender that times first requests only (a baseline or a floor): its replay refuses, saying `noReplay`. */
export function firstRequestsOnly(name: string, noReplay: string, first: (key: string) => Promise<void>): Operations {
  return {
    name,
    first,
    replay: () => Promise.reject(new Error(`bench: ${name}: ${noReplay}`)),
    settle: async () => undefined,
    close: async () => undefined,
  };
}
