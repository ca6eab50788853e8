import { systemClock } from '@oncely/core';
import type { OutboxWakeUp } from '@oncely/core/adapter';
import { checkout } from '../driver/checkout.js';
import { isPostgresJs } from '../driver/postgresjs-driver.js';
import type { PgPoolLike, PostgresDb, PostgresTx } from '../driver/postgres-db.js';
import { quoteIdentifier } from '../identifiers/identifier.js';

/** A `pg` connection as far as LISTEN goes (`pg.Client` and pooled clients are event emitters). */
interface PgListener {
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: unknown) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  release?(destroy?: boolean | Error): void;
}

/** PGlite's LISTEN. */
interface PGliteListener {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/** postgres.js's LISTEN: a connection of its own, which postgres.js reconnects and listens on again. */
interface PostgresJsListener {
  listen(channel: string, onNotify: (payload: string) => void): Promise<{ unlisten(): Promise<unknown> }>;
}

/** A live LISTEN: `close` ends it; `broken` turns true when its connection is lost. */
interface Listening {
  close(): Promise<void>;
  readonly broken: () => boolean;
}

const isFunction = (value: unknown) => typeof value === 'function';

/**
 * LISTENs on `channel` with whatever `db` is, calling `notify` on every notification. A single
 * `pg.Client` takes its LISTEN through `serial` (the driver's queue), so it never lands inside a
 * transaction that is open on that connection.
 */
async function listen(db: PostgresDb, serial: PostgresTx, channel: string, notify: () => void): Promise<Listening> {
  const quoted = quoteIdentifier(channel, 'notification channel');
  const shape = db as Partial<PGliteListener & { connect(): Promise<PgListener>; totalCount: number }> & Partial<PgListener>;
  if (isPostgresJs(db)) {
    const listening = await (db as unknown as PostgresJsListener).listen(channel, notify);
    return {
      close: async () => {
        await listening.unlisten();
      },
      broken: () => false,
    };
  }
  if (isFunction(shape.listen)) {
    const unlisten = await (db as unknown as PGliteListener).listen(channel, notify);
    return { close: unlisten, broken: () => false };
  }
  let broken = false;
  const onNotification = (message: { channel: string }) => {
    if (message.channel === channel) notify();
  };
  const onLost = () => {
    broken = true;
    notify();
  };
  // A pool lends a connection for as long as the relay listens (heard from checkout on); a single client listens itself.
  const pooled = isFunction(shape.connect) && typeof shape.totalCount === 'number';
  const connection = pooled ? ((await checkout(db as PgPoolLike, onLost)) as unknown as PgListener) : (db as unknown as PgListener);
  if (!isFunction(connection.on)) {
    if (pooled) connection.release?.(true);
    throw new TypeError('oncely/postgres: LISTEN needs a pg connection that emits notifications');
  }
  connection.on('notification', onNotification);
  if (!pooled) connection.on('error', onLost);
  connection.on('end', onLost);
  const detach = () => {
    connection.removeListener('notification', onNotification);
    connection.removeListener('error', onLost);
    connection.removeListener('end', onLost);
  };
  const run = (text: string) => (pooled ? connection.query(text) : serial.query(text));
  try {
    await run(`LISTEN ${quoted}`);
  } catch (error) {
    detach();
    if (pooled) connection.release?.(true);
    throw error;
  }
  return {
    broken: () => broken,
    async close() {
      detach();
      if (pooled) {
        // Destroyed rather than returned: a pooled connection must not carry a LISTEN to its next borrower.
        connection.release?.(true);
      } else if (!broken) {
        await run(`UNLISTEN ${quoted}`).catch(() => undefined);
      }
    },
  };
}

/**
 * Opens a LISTEN/NOTIFY wake-up on `channel`. A notification that arrives between two waits is kept,
 * so none is lost; if the listening connection drops, waits fall back to plain polling and the next
 * wait after `retryMs` listens again (and wakes at once, since notifications may have been missed).
 * Behind PgBouncer in transaction mode LISTEN does not work: the relay then only polls.
 */
export async function openWakeUp(db: PostgresDb, serial: PostgresTx, channel: string, retryMs = 5_000): Promise<OutboxWakeUp> {
  let pending = false;
  let interrupt: (() => void) | undefined;
  const notify = () => {
    pending = true;
    interrupt?.();
  };
  let listening: Listening | undefined = await listen(db, serial, channel, notify);
  let retryAt = 0;
  let closed = false;

  async function relisten(): Promise<void> {
    if (systemClock.now() < retryAt) return;
    retryAt = systemClock.now() + retryMs;
    await listening?.close().catch(() => undefined);
    listening = undefined;
    try {
      listening = await listen(db, serial, channel, notify);
      pending = true;
    } catch {
      // Still down: keep polling, try again later.
    }
  }

  return {
    async wait(timeoutMs, signal) {
      if (!closed && (!listening || listening.broken())) await relisten();
      if (!pending) {
        const stop = new AbortController();
        interrupt = () => stop.abort();
        const onAbort = () => stop.abort();
        signal.addEventListener('abort', onAbort, { once: true });
        await systemClock.sleep(timeoutMs, stop.signal).catch(() => undefined);
        signal.removeEventListener('abort', onAbort);
        interrupt = undefined;
      }
      pending = false;
    },
    async close() {
      closed = true;
      interrupt?.();
      await listening?.close();
      listening = undefined;
    },
  };
}
