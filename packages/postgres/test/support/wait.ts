import type pg from 'pg';

/** Polls `check` until it holds; fails the test with `what` after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Resolves once a backend of `applicationName` is blocked on a lock (a row or the key's inserter). */
export function blockedOnLock(observer: pg.Pool, applicationName: string): Promise<void> {
  return until(`${applicationName} waits on a lock`, async () => {
    const { rows } = await observer.query(
      `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
      [applicationName],
    );
    return rows.length > 0;
  });
}

/** A promise and the function that resolves it: holds a handler at a named point. */
export function gate(): { readonly opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
