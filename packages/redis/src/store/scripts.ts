import { createHash } from 'node:crypto';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import claim from './scripts/claim.lua';
import complete from './scripts/complete.lua';
import extend from './scripts/extend.lua';
import get from './scripts/get.lua';
import release from './scripts/release.lua';

/** A client or a pipeline of one, as far as calling a defined script goes. */
type ScriptTarget = Redis | Cluster | ChainableCommander;
type ScriptCall = (key: string, ...args: (string | number)[]) => unknown;

const SOURCES = { claim, complete, extend, get, release } as const;

/** The store's scripts. */
export type ScriptName = keyof typeof SOURCES;

/**
 * Command names carry a hash of their Lua, so two copies of this package sharing one client never
 * run each other's scripts.
 */
const COMMANDS = Object.fromEntries(
  Object.entries(SOURCES).map(([name, lua]) => [name, `oncely_${name}_${createHash('sha1').update(lua).digest('hex').slice(0, 10)}`]),
) as Record<ScriptName, string>;

/**
 * Registers every script on the client with `defineCommand`, once per client: ioredis then sends
 * EVAL with the source on the first call per connection and EVALSHA afterwards.
 */
export function registerScripts(client: Redis | Cluster): void {
  const commands = client as unknown as Record<string, unknown>;
  for (const name of Object.keys(SOURCES) as ScriptName[]) {
    if (typeof commands[COMMANDS[name]] === 'function') continue;
    client.defineCommand(COMMANDS[name], { numberOfKeys: 1, lua: SOURCES[name] });
  }
}

/** Calls a registered script on a client (one command) or queues it on a pipeline. */
export function callScript<T extends ScriptTarget>(
  target: T,
  name: ScriptName,
  key: string,
  args: readonly (string | number)[],
): T extends ChainableCommander ? ChainableCommander : Promise<unknown> {
  const call = (target as unknown as Record<string, ScriptCall>)[COMMANDS[name]];
  if (typeof call !== 'function') throw new Error(`the ${name} script is not registered on this client`);
  return call.call(target, key, ...args) as T extends ChainableCommander ? ChainableCommander : Promise<unknown>;
}
