import type { SqlResult } from '../driver/postgres-db.js';

/** What a driver's raw query resolves to: pg's and PGlite's result objects, or postgres.js's row list. */
type DriverResult =
  | { readonly rows: readonly unknown[]; readonly rowCount?: number | null; readonly affectedRows?: number }
  | (readonly unknown[] & { readonly count?: number | null });

/** A driver result as oncely reads it, whichever driver an ORM runs on. */
export function sqlResult<R>(result: unknown): SqlResult<R> {
  const raw = result as DriverResult;
  if (Array.isArray(raw)) {
    const list = raw as readonly unknown[] & { readonly count?: number | null };
    return { rows: [...list] as R[], rowCount: list.count ?? list.length };
  }
  const rows = (raw as { rows?: readonly unknown[] }).rows ?? [];
  const { rowCount, affectedRows } = raw as { rowCount?: number | null; affectedRows?: number };
  return { rows: [...rows] as R[], rowCount: rowCount ?? affectedRows ?? rows.length };
}

/** Splits a statement at its `$n` parameters: the text between them and the parameter each stands for (0-based). */
export function splitParameters(text: string): { readonly parts: readonly string[]; readonly indexes: readonly number[] } {
  const parts: string[] = [];
  const indexes: number[] = [];
  let last = 0;
  // oncely's statements hold no `$` but their parameters (sql/invocation.ts relies on it too).
  for (const match of text.matchAll(/\$(\d+)/g)) {
    parts.push(text.slice(last, match.index));
    indexes.push(Number(match[1]) - 1);
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return { parts, indexes };
}
