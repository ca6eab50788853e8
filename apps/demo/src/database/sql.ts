/**
 * Every SQL statement of the demo's own tables, in one place. Amounts are `numeric(14,2)` and cross
 * into JavaScript as text (`::text`), so money is never a float.
 */

/** The demo's tables. `demo_invoice_lines` has no unique payment_id on purpose: the inbox alone must prevent duplicates. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS demo_accounts (
  tenant     text NOT NULL,
  id         text NOT NULL,
  balance    numeric(14,2) NOT NULL CHECK (balance >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, id)
);
CREATE TABLE IF NOT EXISTS demo_payments (
  id         text PRIMARY KEY,
  tenant     text NOT NULL,
  account_id text NOT NULL,
  amount     numeric(14,2) NOT NULL CHECK (amount > 0),
  currency   text NOT NULL,
  status     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (tenant, account_id) REFERENCES demo_accounts (tenant, id)
);
CREATE INDEX IF NOT EXISTS demo_payments_by_account ON demo_payments (tenant, account_id);
CREATE TABLE IF NOT EXISTS demo_invoice_lines (
  id         bigserial PRIMARY KEY,
  tenant     text NOT NULL,
  account_id text NOT NULL,
  payment_id text NOT NULL,
  amount     numeric(14,2) NOT NULL,
  currency   text NOT NULL,
  event_id   text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS demo_invoice_lines_by_tenant ON demo_invoice_lines (tenant, id);
CREATE TABLE IF NOT EXISTS demo_broker_messages (
  id          bigserial PRIMARY KEY,
  event_id    text NOT NULL,
  event_type  text NOT NULL,
  payload     jsonb NOT NULL,
  enqueued_at timestamptz NOT NULL DEFAULT now(),
  acked_at    timestamptz
);
CREATE INDEX IF NOT EXISTS demo_broker_messages_pending ON demo_broker_messages (id) WHERE acked_at IS NULL;
CREATE TABLE IF NOT EXISTS demo_provider_charges (
  idempotency_key text PRIMARY KEY,
  charge_id       text NOT NULL,
  amount          numeric(14,2) NOT NULL,
  calls           integer NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS demo_payment_charges (
  payment_id text PRIMARY KEY REFERENCES demo_payments (id),
  charge_id  text NOT NULL
);
`;

/** The fake provider's charge: the first call with a key creates it, every later one counts and answers it again. */
export const PROVIDER_CHARGE = `
INSERT INTO demo_provider_charges (idempotency_key, charge_id, amount) VALUES ($1, $2, $3::numeric)
ON CONFLICT (idempotency_key) DO UPDATE SET calls = demo_provider_charges.calls + 1
RETURNING charge_id, amount::text AS amount, calls`;

/** What the provider holds for a key. */
export const PROVIDER_CHARGE_BY_KEY = `
SELECT charge_id, amount::text AS amount, calls FROM demo_provider_charges WHERE idempotency_key = $1`;

/** The provider's charge id kept with the payment: the flow's final local write. */
export const INSERT_PAYMENT_CHARGE = `INSERT INTO demo_payment_charges (payment_id, charge_id) VALUES ($1, $2)`;

/** Creates the account on first use; a no-op afterwards. */
export const OPEN_ACCOUNT = `
INSERT INTO demo_accounts (tenant, id, balance) VALUES ($1, $2, $3::numeric)
ON CONFLICT (tenant, id) DO NOTHING`;

/** Debits only when the balance covers the amount; no row back means insufficient funds. */
export const DEBIT_ACCOUNT = `
UPDATE demo_accounts SET balance = balance - $3::numeric, updated_at = now()
WHERE tenant = $1 AND id = $2 AND balance >= $3::numeric
RETURNING balance::text AS balance`;

/** An account's balance, to explain a refusal. */
export const ACCOUNT_BALANCE = `SELECT balance::text AS balance FROM demo_accounts WHERE tenant = $1 AND id = $2`;

/** Records a charge. */
export const INSERT_PAYMENT = `
INSERT INTO demo_payments (id, tenant, account_id, amount, currency, status)
VALUES ($1, $2, $3, $4::numeric, $5, 'succeeded')`;

/** An account with its number of charges. */
export const ACCOUNT_SUMMARY = `
SELECT a.id, a.balance::text AS balance,
       (SELECT count(*)::int FROM demo_payments p WHERE p.tenant = a.tenant AND p.account_id = a.id) AS payments
FROM demo_accounts a WHERE a.tenant = $1 AND a.id = $2`;

/** The most recently charged accounts of every tenant, for the dashboard. */
export const RECENT_ACCOUNTS = `
SELECT a.tenant, a.id, a.balance::text AS balance,
       (SELECT count(*)::int FROM demo_payments p WHERE p.tenant = a.tenant AND p.account_id = a.id) AS payments
FROM demo_accounts a ORDER BY a.updated_at DESC, a.tenant, a.id LIMIT $1`;

/** A tenant's invoice lines, oldest first. */
export const INVOICE_LINES = `
SELECT payment_id, account_id, amount::text AS amount, currency, event_id
FROM demo_invoice_lines WHERE tenant = $1 ORDER BY id`;

/** Billing's local effect of one payment event. */
export const INSERT_INVOICE_LINE = `
INSERT INTO demo_invoice_lines (tenant, account_id, payment_id, amount, currency, event_id)
VALUES ($1, $2, $3, $4::numeric, $5, $6)`;

/** The stand-in broker's publish: the message is durable (acknowledged) once this commits. */
export const PUBLISH_MESSAGE = `
INSERT INTO demo_broker_messages (event_id, event_type, payload) VALUES ($1, $2, $3::jsonb)`;

/** Messages delivered but not yet acknowledged: redelivered until acked (at-least-once). */
export const PENDING_MESSAGES = `
SELECT id::text AS id, event_id, event_type, payload FROM demo_broker_messages
WHERE acked_at IS NULL ORDER BY id LIMIT $1`;

/** The consumer's acknowledgement. */
export const ACK_MESSAGE = `UPDATE demo_broker_messages SET acked_at = now() WHERE id = $1::bigint`;

/** Broker gauges for the dashboard. */
export const BROKER_COUNTS = `
SELECT count(*)::int AS delivered, count(*) FILTER (WHERE acked_at IS NULL)::int AS unacked FROM demo_broker_messages`;
