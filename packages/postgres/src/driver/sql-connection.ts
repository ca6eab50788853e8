import type { PgClientLike, PostgresJsResultLike, PostgresJsSqlLike, PostgresTx } from './postgres-db.js';
import type { ScriptOutcome } from './script.js';

/** A connection inside a transaction; `exec` runs a parameterless script of several statements. */
export interface SqlConnection extends PostgresTx {
  exec(script: string): Promise<void>;
}

/** What transaction work decides: commit or roll back, and the value to return either way. */
export interface TransactionEnd<T> {
  readonly action: 'commit' | 'rollback';
  readonly value: T;
}

/**
 * One `pg` connection held for a transaction that oncely drives with simple-protocol messages: the
 * claim travels with BEGIN, the saved outcome with COMMIT.
 */
export interface PgSession {
  /** Names of oncely's statements `PREPARE`d on this connection, shared by every driver object over it. */
  readonly prepared: Set<string>;
  /** Sends `text` as one message; resolves with what each statement did, rejects only when the connection is gone. */
  script(text: string): Promise<ScriptOutcome>;
  /** The handler's handle; refuses SQL once `closeTx` is called, and records a lost connection in `watch`. */
  readonly tx: SqlConnection;
  closeTx(): void;
  readonly watch: ConnectionWatch;
  /** The connection's state is unknown (a failed COMMIT or ROLLBACK): a pool destroys it instead of reusing it. */
  broken(error: unknown): void;
  /** The connection itself, for an ORM bridge that builds its transaction object over it (`TransactionBridge.pg`). */
  readonly client: PgClientLike;
}

/** One database behind one interface, whichever driver it is. */
export interface SqlDriver extends PostgresTx {
  /** `pool`: a connection per transaction; `client` and `pglite`: one connection, transactions in turn. */
  readonly kind: 'pool' | 'client' | 'pglite';
  /**
   * Runs `work` between BEGIN and COMMIT (or ROLLBACK, as it decides) on one connection. When `work`
   * throws, rolls back and rethrows the same error. The connection handed to `work` refuses SQL once
   * the transaction has ended.
   */
  transaction<T>(work: (tx: SqlConnection) => Promise<TransactionEnd<T>>): Promise<T>;
  /** PGlite only: `PREPARE`s oncely's `texts` now, outside any transaction, so statements inside one run prepared. */
  readonly prepare?: (texts: readonly string[]) => Promise<void>;
  /** `pg` only: holds one connection for `use`, as `transaction` does, but sends no BEGIN of its own. */
  readonly session?: <T>(use: (session: PgSession) => Promise<T>) => Promise<T>;
  /** postgres.js only: reserves one connection for `use`, as `transaction` does, but sends no BEGIN of its own. */
  readonly reserve?: <T>(use: (session: PostgresJsSession) => Promise<T>) => Promise<T>;
}

/** One simple-protocol message's outcome: its statements' results, or none and the error that stopped it. */
export interface MessageOutcome {
  readonly results: PostgresJsResultLike[];
  readonly error?: unknown;
}

/**
 * One postgres.js connection reserved for a transaction oncely drives with simple-protocol
 * messages: the claim travels with BEGIN, the saved outcome with COMMIT.
 */
export interface PostgresJsSession {
  /**
   * Sends `first` bound to `params` (prepared by postgres.js itself when the instance prepares; none: a simple message), then the
   * message `next` writes once the connection is known (from the names oncely has `PREPARE`d on it), in
   * one write: postgres.js pipelines them. Each settles on its own.
   */
  pipeline(first: string, params: readonly unknown[], next: (prepared: Set<string>) => string): Promise<readonly [MessageOutcome, MessageOutcome]>;
  /** Sends `text` as one message. */
  script(text: string): Promise<MessageOutcome>;
  /** Whether oncely may `PREPARE` its statements on this connection: off when the instance says `prepare: false`. */
  readonly prepares: boolean;
  /** Names of oncely's statements `PREPARE`d on this connection (empty until the first message found it). */
  readonly prepared: Set<string>;
  /** The handler's handle: postgres.js's own `sql` on this connection, plus `query` and `exec`; refuses SQL once `closeTx` is called. */
  readonly tx: SqlConnection & PostgresJsSqlLike;
  closeTx(): void;
  readonly watch: ConnectionWatch;
}


/** The first error that said the transaction's connection is gone: from a statement, or the client's `'error'` event. */
export interface ConnectionWatch {
  lost?: unknown;
}
