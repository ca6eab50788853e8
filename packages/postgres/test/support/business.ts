import type { IdempotentResponse, TransactionHandlerContext } from '@oncely/core';
import type { PostgresTx } from '../../src/index.js';

type Db = { query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }> };

/** A payments business schema beside the idempotency table: what the failure tests count. */
export async function createBusinessTables(db: Db, schema: string): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS "${schema}".accounts (id text PRIMARY KEY, balance numeric NOT NULL)`);
  // No unique constraint on the key: only oncely stands between a retry and a second charge.
  await db.query(`CREATE TABLE IF NOT EXISTS "${schema}".charges (
    id bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES "${schema}".accounts,
    amount numeric NOT NULL)`);
}

/** Opens an account with `balance`. */
export async function openAccount(db: Db, schema: string, account: string, balance: number): Promise<void> {
  await db.query(`INSERT INTO "${schema}".accounts (id, balance) VALUES ($1, $2)`, [account, balance]);
}

/** How many charges an account has and what its balance is now. */
export async function ledger(db: Db, schema: string, account: string): Promise<{ charges: number; amounts: number[]; balance: number }> {
  const charges = await db.query(`SELECT amount::float8 AS amount FROM "${schema}".charges WHERE account_id = $1 ORDER BY id`, [account]);
  const balance = await db.query(`SELECT balance::float8 AS balance FROM "${schema}".accounts WHERE id = $1`, [account]);
  const amounts = (charges.rows as { amount: number }[]).map((row) => row.amount);
  return { charges: amounts.length, amounts, balance: (balance.rows[0] as { balance: number }).balance };
}

/** The business transaction: insert a charge and debit the account, in the handler's transaction. */
export async function charge(tx: PostgresTx, schema: string, account: string, amount: number) {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO "${schema}".charges (account_id, amount) VALUES ($1, $2) RETURNING id::text AS id`,
    [account, amount],
  );
  await tx.query(`UPDATE "${schema}".accounts SET balance = balance - $2 WHERE id = $1`, [account, amount]);
  return rows[0]!.id;
}

/** A handler that charges and answers 201 with the charge id. */
export const chargeHandler =
  (schema: string, account: string, amount: number) =>
  async ({ tx }: TransactionHandlerContext<PostgresTx>): Promise<IdempotentResponse<{ chargeId: string; amount: number }>> => {
    const chargeId = await charge(tx, schema, account, amount);
    return { status: 201, body: { chargeId, amount }, resourceId: chargeId };
  };
