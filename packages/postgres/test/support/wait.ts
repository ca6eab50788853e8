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

/**
 * Polls `measure` until it reports `done`; fails with `what` and the last measure only when its
 * `progress` has not grown for `stallMs`: a loaded machine may be slow, a stuck pipeline stands still.
 */
export async function untilStalled(
  what: string,
  measure: () => Promise<{ readonly done: boolean; readonly progress: number }>,
  stallMs: number,
): Promise<void> {
  let best = -Infinity;
  let movedAt = Date.now();
  for (;;) {
    const now = await measure();
    if (now.done) return;
    if (now.progress > best) [best, movedAt] = [now.progress, Date.now()];
    else if (Date.now() - movedAt > stallMs) throw new Error(`no progress for ${stallMs} ms waiting until ${what}: ${JSON.stringify(now)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
