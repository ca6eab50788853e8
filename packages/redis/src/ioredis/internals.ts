import type { Redis } from 'ioredis';

/**
 * Every ioredis internal the store's fast path reaches into, and only here: none of them is ioredis's
 * documented API, so a new ioredis may move one. Each accessor answers `undefined` when its internal is
 * not where this module expects it, and the caller then takes the documented path (the same replies,
 * without the fast path). `test/ioredis/internals.test.ts` checks each one against the installed
 * ioredis (5 and 6 in the test matrix) and fails naming the one that moved.
 */
export const IOREDIS_INTERNALS = {
  /** Sends the store's `SET NX GET` past the auto-pipeline (own-commands.ts). */
  builtinCommand: 'Redis#createBuiltinCommand(name).string',
  /** Sends the store's scripts past the auto-pipeline (lua/script-set.ts). */
  scriptsSet: 'Redis#scriptsSet[command].execute(client, args, options)',
  /** Corked for one tick, so the tick's commands share one socket write (store/tick-batch.ts). */
  stream: "Redis#stream (the connection's net.Socket, cork/uncork)",
} as const;

/** A command function as ioredis generates it: the reply as a promise. */
export type CommandFunction = (this: Redis, ...args: (string | number)[]) => Promise<unknown>;

/** The part of ioredis's `Script` (what `defineCommand` registers) the store calls. */
export interface DefinedScript {
  execute(client: Redis, args: (string | number)[], options: { replyEncoding: 'utf8' }): Promise<unknown>;
}

/** The part of a socket tick batching needs: Node's `net.Socket` buffers writes while it is corked. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * The built-in command `name` (string replies) as a function of its own: ioredis makes it without a
 * function name, and a command without one never joins the auto-pipeline.
 */
export function unpipelinedCommand(client: Redis, name: string): CommandFunction | undefined {
  const create = (client as { createBuiltinCommand?: unknown }).createBuiltinCommand;
  if (typeof create !== 'function') return undefined;
  const made = (create.call(client, name) as { string?: unknown } | undefined)?.string;
  return typeof made === 'function' ? (made as CommandFunction) : undefined;
}

/** The script object `defineCommand(command, …)` registered: its `execute` sends one plain command. */
export function definedScript(client: Redis, command: string): DefinedScript | undefined {
  const script = (client as { scriptsSet?: Record<string, Partial<DefinedScript> | undefined> }).scriptsSet?.[command];
  return typeof script?.execute === 'function' ? (script as DefinedScript) : undefined;
}

/** The socket of a connected client, if it can be corked. */
export function connectionSocket(client: Redis): Corkable | undefined {
  const socket = (client as { stream?: Partial<Corkable> }).stream;
  return typeof socket?.cork === 'function' && typeof socket.uncork === 'function' ? (socket as Corkable) : undefined;
}
