import { createHash } from 'node:crypto';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import { definedScript } from '../ioredis/internals.js';

/** One Lua script and the number of keys it declares. */
export interface ScriptSource {
  readonly lua: string;
  readonly keys: number;
}

/** A client or a pipeline: anything a defined command can be called on. */
type ScriptTarget = Redis | Cluster | ChainableCommander;

/** A named set of scripts, registered once per client and called by name. */
export interface ScriptSet<Name extends string> {
  /** Registers every script with `defineCommand` (EVAL on a connection's first call, EVALSHA after). */
  register(client: Redis | Cluster): void;
  /** Calls a registered script: one command on a client, queued on a pipeline. */
  call(target: ScriptTarget, name: Name, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /**
   * Calls a registered script on a standalone client as one plain command, even when the client has
   * `enableAutoPipelining`: through the script object `defineCommand` made, which ioredis runs the
   * same way (EVAL on a connection's first call, EVALSHA after). Falls back to {@link call} if that
   * object is not where ioredis keeps it (ioredis/internals.ts).
   */
  callUnpipelined(client: Redis, name: Name, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/**
 * Command names are `<namespace><name>_<sha1 prefix of the Lua>`, so two copies of the package on one
 * client never run each other's scripts.
 */
export function scriptSet<Name extends string>(namespace: string, scripts: Readonly<Record<Name, ScriptSource>>): ScriptSet<Name> {
  const names = Object.keys(scripts) as Name[];
  const command = Object.fromEntries(
    names.map((name) => [name, `${namespace}${name}_${createHash('sha1').update(scripts[name].lua).digest('hex').slice(0, 10)}`]),
  ) as Record<Name, string>;
  const call: ScriptSet<Name>['call'] = (target, name, keys, args) => {
    const method = (target as unknown as Record<string, (...values: (string | number)[]) => Promise<unknown>>)[command[name]];
    if (typeof method !== 'function') throw new Error(`the ${name} script is not registered on this client`);
    return method.call(target, ...keys, ...args);
  };
  return {
    register(client) {
      const commands = client as unknown as Record<string, unknown>;
      for (const name of names) {
        if (typeof commands[command[name]] === 'function') continue;
        client.defineCommand(command[name], { numberOfKeys: scripts[name].keys, lua: scripts[name].lua });
      }
    },
    call,
    callUnpipelined(client, name, keys, args) {
      const script = definedScript(client, command[name]);
      if (!script) return call(client, name, keys, args);
      return script.execute(client, [...keys, ...args], { replyEncoding: 'utf8' });
    },
  };
}
