import { isOncelyError, type StorageError } from '@oncely/core';
import type { OperationJournal } from '@oncely/core/journal';
import type { RetryOutcome } from '@oncely/core/retry';

/** What the page says in each status; see {@link PAYMENT_MESSAGES}. */
export interface OperationMessages {
  readonly ready: string;
  readonly working: string;
  readonly succeeded: string;
  readonly failed: string;
  readonly unknown: string;
  readonly unreadable: string;
}

/** The words the seed asks a checkout for; pass `messages` to change any of them. */
export const PAYMENT_MESSAGES: OperationMessages = {
  ready: 'Pay',
  working: 'Paying…',
  succeeded: 'Paid',
  failed: 'The payment was declined',
  unknown: 'We are checking whether your payment went through',
  unreadable: 'The saved state of this payment cannot be read; nothing more will be sent',
};

/**
 * What the page shows for one operation, and the one action it may offer. No status offers an action
 * that mints a new key: `start` and `reconcile` both resume the operation under the journal's key.
 *
 * - `ready`: nothing sent yet (or every attempt was refused before it ran, `lastError`): offer `start`.
 * - `working`: attempts under way, in this tab or (waiting for the lock) in another.
 * - `succeeded`, `failed`: definitive; a new attempt needs a new intent (a new cart, a new operationId).
 * - `unknown`: the effect may have happened; offer `reconcile`, which asks again with the same key.
 * - `unreadable`: the journal's entry is corrupt or from another format; it is kept, nothing is sent.
 */
export type OperationView<V = unknown, E = unknown> = { readonly message: string } & (
  | { readonly status: 'ready'; readonly action: 'start'; readonly key: string | undefined; readonly lastError?: unknown }
  | { readonly status: 'working'; readonly key: string | undefined }
  | { readonly status: 'succeeded'; readonly key: string | undefined; readonly attempts: number; readonly value: V }
  | { readonly status: 'failed'; readonly key: string | undefined; readonly attempts: number; readonly error: E }
  | { readonly status: 'unknown'; readonly action: 'reconcile'; readonly key: string | undefined; readonly lastError: unknown }
  | { readonly status: 'unreadable'; readonly error: StorageError }
);

/** Options of {@link trackOperation}. */
export interface TrackOperationOptions<T, V = T, E = unknown> {
  /** The journal `run` uses, read to restore the view after a reload. */
  readonly journal: OperationJournal;
  /** The operation's id, derived from the user's intent (`cart-42:checkout`). */
  readonly operationId: string;
  /** Runs or resumes the operation: `idempotentFetch` with the same journal and operationId. */
  readonly run: () => Promise<RetryOutcome<T>>;
  /** Turns a success into what the page shows (e.g. `(response) => response.json()`). */
  readonly read?: (value: T) => V | Promise<V>;
  /** Turns a definitive failure (a `Response` for an HTTP answer) into what the page shows. */
  readonly readError?: (error: unknown) => E | Promise<E>;
  /** Receives every view, the restored one first. */
  readonly onChange?: (view: OperationView<V, E>) => void;
  readonly messages?: Partial<OperationMessages>;
}

/** A tracked operation: its current view and the two actions, both under the journal's key. */
export interface TrackedOperation<V = unknown, E = unknown> {
  readonly view: OperationView<V, E>;
  /** The "Pay" button: runs the operation, or joins the run under way. Settled views stay as they are. */
  start(): Promise<OperationView<V, E>>;
  /** The "Check again" button of `unknown`: asks again with the same key (the server replays or runs it once). */
  reconcile(): Promise<OperationView<V, E>>;
}

/**
 * Turns an operation's journal state into what a page shows, framework-free. It reads the journal
 * first, so a reload shows where the operation stands: an operation begun before the reload (sent,
 * maybe answered, maybe not) is resumed at once under its key, and a settled one is answered from the
 * journal without a request. One run at a time per tab; across tabs, the browser `idempotentFetch`'s
 * Web Lock makes one owner. Errors `run` throws (the journal failing) end in `unknown`, since an
 * attempt may have been sent; an unreadable entry ends in `unreadable`.
 */
export async function trackOperation<T, V = T, E = unknown>(options: TrackOperationOptions<T, V, E>): Promise<TrackedOperation<V, E>> {
  const messages = { ...PAYMENT_MESSAGES, ...options.messages };
  const read = options.read ?? ((value: T) => value as unknown as V);
  const readError = options.readError ?? ((error: unknown) => error as E);
  type View = OperationView<V, E>;
  let view: View;
  let running: Promise<View> | undefined;

  const show = (next: View): View => {
    view = next;
    options.onChange?.(next);
    return next;
  };
  const keyOf = (current: View) => ('key' in current ? current.key : undefined);
  const unreadable = (error: unknown): View | undefined =>
    // A journal entry its journal cannot read (an UnreadableJournalEntryError, or a server journal's corrupt row).
    isOncelyError(error, 'corrupt_record')
      ? { status: 'unreadable', message: messages.unreadable, error: error as StorageError }
      : undefined;
  const unknown = (key: string | undefined, lastError: unknown): View => ({
    status: 'unknown',
    action: 'reconcile',
    message: messages.unknown,
    key,
    lastError,
  });

  const settle = async (outcome: RetryOutcome<T>): Promise<View> => {
    const key = (await options.journal.get(options.operationId).catch(() => undefined))?.key ?? keyOf(view);
    if (outcome.outcome === 'succeeded') {
      return { status: 'succeeded', message: messages.succeeded, key, attempts: outcome.attempts, value: await read(outcome.value) };
    }
    if (outcome.outcome === 'unknown') return unknown(outcome.key ?? key, outcome.lastError);
    if (outcome.stoppedBy === 'answer') {
      return { status: 'failed', message: messages.failed, key, attempts: outcome.attempts, error: await readError(outcome.error) };
    }
    // Every attempt was refused before it ran: nothing happened, and starting again reuses the key.
    return { status: 'ready', action: 'start', message: messages.ready, key, lastError: outcome.error };
  };

  const go = (): Promise<View> => {
    running ??= (async () => {
      await null;
      try {
        show({ status: 'working', message: messages.working, key: keyOf(view) });
        return show(await settle(await options.run()));
      } catch (error) {
        return show(unreadable(error) ?? unknown(keyOf(view), error));
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const resume = () => (view.status === 'ready' || view.status === 'unknown' ? go() : (running ?? Promise.resolve(view)));

  try {
    const entry = await options.journal.get(options.operationId);
    show(
      entry
        ? { status: 'working', message: messages.working, key: entry.key }
        : { status: 'ready', action: 'start', message: messages.ready, key: undefined },
    );
    // Begun before this page loaded: resume it (a settled one answers from the journal, sending nothing).
    if (entry) void go();
  } catch (error) {
    show(unreadable(error) ?? unknown(undefined, error));
  }

  return {
    get view() {
      return view;
    },
    start: resume,
    reconcile: resume,
  };
}
