import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import attempt from './scripts/attempt.lua';
import begin from './scripts/begin.lua';
import complete from './scripts/complete.lua';
import forget from './scripts/forget.lua';
import settled from './scripts/settled.lua';
import unknown from './scripts/unknown.lua';
import unresolved from './scripts/unresolved.lua';

/** Each journal script with the number of keys it declares. */
const SCRIPTS = {
  begin: { lua: begin, keys: 2 },
  attempt: { lua: attempt, keys: 3 },
  complete: { lua: complete, keys: 4 },
  unknown: { lua: unknown, keys: 3 },
  unresolved: { lua: unresolved, keys: 2 },
  settled: { lua: settled, keys: 1 },
  forget: { lua: forget, keys: 2 },
} as const;

/** The journal's scripts. */
export type JournalScript = keyof typeof SCRIPTS;

/** Command names carry a hash of their Lua, so two package versions on one client never mix scripts. */
const COMMANDS = Object.fromEntries(
  Object.entries(SCRIPTS).map(([name, { lua }]) => [
    name,
    `oncely_journal_${name}_${createHash('sha1').update(lua).digest('hex').slice(0, 10)}`,
  ]),
) as Record<JournalScript, string>;

/** Registers the scripts once per client with `defineCommand` (EVALSHA after the first call). */
export function registerJournalScripts(client: Redis | Cluster): void {
  const commands = client as unknown as Record<string, unknown>;
  for (const name of Object.keys(SCRIPTS) as JournalScript[]) {
    if (typeof commands[COMMANDS[name]] === 'function') continue;
    client.defineCommand(COMMANDS[name], { numberOfKeys: SCRIPTS[name].keys, lua: SCRIPTS[name].lua });
  }
}

/** A client or a pipeline: anything a defined command can be called on. */
type ScriptTarget = Redis | Cluster | ReturnType<Redis['pipeline']>;

/** Calls a registered journal script with its keys, then its arguments. */
export function callJournalScript(
  target: ScriptTarget,
  name: JournalScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const call = (target as unknown as Record<string, (...values: (string | number)[]) => Promise<unknown>>)[COMMANDS[name]];
  if (typeof call !== 'function') throw new Error(`the journal ${name} script is not registered on this client`);
  return call.call(target, ...keys, ...args);
}
