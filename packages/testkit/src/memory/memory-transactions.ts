import { OncelyError } from '@oncely/core';

/**
 * A transaction of a {@link MemoryTransactions} database: writes are staged with `onCommit` and
 * applied only if the transaction commits. After a write failed, like a PostgreSQL transaction after
 * an error, it accepts nothing more and cannot commit.
 */
export interface MemoryTransaction {
  /** Stages `apply` to run when the transaction commits. Throws `invalid_state` once it has ended or failed. */
  onCommit(apply: () => void): void;
  /** Marks the transaction failed with `error` (it will roll back) and throws `error`. */
  fail(error: unknown): never;
  /** Throws `invalid_state` unless the transaction is open and has not failed. */
  assertOpen(): void;
}

/** In-memory transactions run one at a time, as if every writer locked the whole database. */
export interface MemoryTransactions {
  /**
   * Runs `work` in a transaction once every earlier one has ended: commits when it resolves (unless a
   * write failed: it then rolls back and rejects with that failure), rolls back when it throws.
   */
  transaction<T>(work: (tx: MemoryTransaction) => Promise<T>): Promise<T>;
}

/** True for a handle made by {@link memoryTransactions}. */
export function isMemoryTransaction(tx: unknown): tx is MemoryTransaction {
  return tx instanceof Transaction;
}

class Transaction implements MemoryTransaction {
  #state: 'open' | 'failed' | 'ended' = 'open';
  #failure: unknown;
  readonly #commits: (() => void)[] = [];

  onCommit(apply: () => void): void {
    this.assertOpen();
    this.#commits.push(apply);
  }

  fail(error: unknown): never {
    if (this.#state === 'open') {
      this.#state = 'failed';
      this.#failure = error;
    }
    throw error;
  }

  assertOpen(): void {
    if (this.#state === 'ended') {
      throw new OncelyError('invalid_state', 'oncely/memory: this transaction has ended; use tx only inside its work');
    }
    if (this.#state === 'failed') {
      throw new OncelyError('invalid_state', 'oncely/memory: an earlier write failed; roll this transaction back', { cause: this.#failure });
    }
  }

  /** Applies the staged writes, or rejects with the failure that doomed the transaction. */
  end(commit: boolean): void {
    const failed = this.#state === 'failed';
    this.#state = 'ended';
    if (!commit) return;
    if (failed) throw this.#failure;
    for (const apply of this.#commits) apply();
  }
}

/** Creates a database of in-memory transactions for the memory outbox and inbox (and a test's own state). */
export function memoryTransactions(): MemoryTransactions {
  let turn: Promise<unknown> = Promise.resolve();
  return {
    transaction<T>(work: (tx: MemoryTransaction) => Promise<T>): Promise<T> {
      const run = turn.then(async () => {
        const tx = new Transaction();
        let value: T;
        try {
          value = await work(tx);
        } catch (error) {
          tx.end(false);
          throw error;
        }
        tx.end(true);
        return value;
      });
      turn = run.catch(() => undefined);
      return run;
    },
  };
}
