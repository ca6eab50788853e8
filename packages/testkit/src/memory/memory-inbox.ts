import { type Clock, type EventListener, OncelyError, systemClock } from '@oncely/core';
import { assertInboxInput, eventEmitter, type Inbox, type InboxEvent, type InboxInput } from '@oncely/core/adapter';
import { isMemoryTransaction, type MemoryTransaction, type MemoryTransactions, memoryTransactions } from './memory-transactions.js';

/** One processed `(consumer, eventId)` pair. */
export interface MemoryInboxRecord {
  readonly consumer: string;
  readonly eventId: string;
  /** When it was recorded, by the inbox's clock. */
  readonly processedAt: number;
}

/** Options of {@link memoryInbox}. */
export interface MemoryInboxOptions {
  /** Stamps records and events (default the system clock; a manual clock in tests). */
  readonly clock?: Clock;
  /** The transactions `process` writes in; share them with a memory outbox or a test's own state. */
  readonly transactions?: MemoryTransactions;
  /** Told about every duplicate detected. */
  readonly onEvent?: EventListener<InboxEvent>;
}

/** The reference inbox: every clause of the inbox contract, in memory. */
export interface MemoryInbox extends Inbox<MemoryTransaction> {
  /** Where `process`'s transactions come from. */
  readonly transactions: MemoryTransactions;
  /** Every committed record, oldest first. */
  readonly records: readonly MemoryInboxRecord[];
}

const pairOf = (input: InboxInput) => JSON.stringify([input.consumer, input.eventId]);

/** Creates a {@link MemoryInbox}; its transactions run one at a time, so concurrent duplicates queue. */
export function memoryInbox(options: MemoryInboxOptions = {}): MemoryInbox {
  const clock = options.clock ?? systemClock;
  const transactions = options.transactions ?? memoryTransactions();
  const records: MemoryInboxRecord[] = [];
  const staged = new WeakMap<MemoryTransaction, Set<string>>();
  const emit = eventEmitter<InboxEvent>(options.onEvent, clock);

  async function process(tx: MemoryTransaction, input: InboxInput, fn: (tx: MemoryTransaction) => Promise<unknown>) {
    assertInboxInput(input);
    if (!isMemoryTransaction(tx)) {
      throw new OncelyError('invalid_state', 'oncely/memory: inbox.process needs the transaction (tx) to write in');
    }
    tx.assertOpen();
    const pair = pairOf(input);
    const mine = staged.get(tx) ?? new Set<string>();
    staged.set(tx, mine);
    if (mine.has(pair) || records.some((record) => pairOf(record) === pair)) {
      emit({ type: 'inbox_duplicate', consumer: input.consumer, eventId: input.eventId });
      return 'duplicate' as const;
    }
    mine.add(pair);
    const record = { consumer: input.consumer, eventId: input.eventId, processedAt: clock.now() };
    tx.onCommit(() => records.push(record));
    await fn(tx);
    return 'processed' as const;
  }

  return {
    transactions,
    records,
    process,
    run: (input, fn) => transactions.transaction((tx) => process(tx, input, fn)),
    async purgeProcessed({ olderThanMs, limit }) {
      const cutoff = clock.now() - olderThanMs;
      const doomed = records.filter((record) => record.processedAt < cutoff).slice(0, limit);
      for (const record of doomed) records.splice(records.indexOf(record), 1);
      return doomed.length;
    },
  };
}
