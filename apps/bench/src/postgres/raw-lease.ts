import type { Operations } from '../subjects/operations.js';
import type { PaymentEffect } from '../subjects/payment-effect.js';
import { rawStatements } from './raw-statements.js';

/** `query(text, params)` as both `pg.Pool` and PGlite offer it. */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

const FINGERPRINT = 'f'.repeat(64);

/**
 * The driver alone doing what lease mode needs: claim (1 statement) and complete (1) for a first
 * request, one select for a replay. No fingerprint check, no fencing beyond the token: the floor.
 */
export function rawLeaseOperations(db: Queryable, effect: PaymentEffect, name: string): Operations {
  const scope = (key: string) => ['bench', 'client', 'payments.create.v1', key];
  return {
    name,
    async first(key) {
      const token = crypto.randomUUID();
      const claimed = await db.query(rawStatements.claim, [...scope(key), FINGERPRINT, token]);
      if (claimed.rows.length !== 1) throw new Error(`bench: raw claim of ${key} found an existing row`);
      const response = await effect.forKey(key)();
      const completed = await db.query(rawStatements.complete, [...scope(key), token, response.status, JSON.stringify(response.body)]);
      if (completed.rows.length !== 1) throw new Error(`bench: raw complete of ${key} lost its token`);
    },
    async replay(key) {
      const { rows } = await db.query(rawStatements.replay, scope(key));
      if (rows.length !== 1) throw new Error(`bench: raw replay of ${key} found nothing`);
    },
    settle: async () => undefined,
    close: async () => undefined,
  };
}
