/** oncely's `PREPARE`d statements per underlying connection (a pg client, a PGlite instance). */
const prepared = new WeakMap<object, Set<string>>();

/**
 * The names oncely has `PREPARE`d on `connection`. Kept per connection, not per driver object: two
 * stores over one client or PGlite instance must not PREPARE twice (42P05 would abort a transaction).
 */
export function preparedOn(connection: object): Set<string> {
  let names = prepared.get(connection);
  if (!names) prepared.set(connection, (names = new Set()));
  return names;
}

/** Replaces what was tracked for a connection with the names its `pg_prepared_statements` lists. */
export function resetPrepared(names: Set<string>, rows: readonly Record<string, unknown>[] | undefined): void {
  names.clear();
  for (const row of rows ?? []) names.add(String(row.name));
}
