import type { Cluster, Redis } from 'ioredis';

/** Calls per command name (`evalsha`, `wait`, `client|setname`...), as `INFO commandstats` counts them. */
export type CommandCalls = Readonly<Record<string, number>>;

const LINE = /^cmdstat_([^:]+):calls=(\d+)/;

/** Parses the text of `INFO commandstats`. */
function parseCommandStats(info: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const line of info.split(/\r?\n/)) {
    const match = LINE.exec(line);
    if (match) calls[match[1]!] = Number(match[2]);
  }
  return calls;
}

/**
 * Reads the server's command counters (`INFO commandstats`), summed over every master of a Cluster.
 * The store sends `set` (its claim) and `evalsha` (`eval` the first time a script runs on a
 * connection) and, with the `wait` option, `wait` and `exists`; the commands its scripts run inside
 * Redis (`get`, `set`, `time`, `pexpiretime`, `del`) are counted too, under their own names.
 */
export async function readCommandStats(client: Redis | Cluster): Promise<CommandCalls> {
  const nodes = 'nodes' in client && typeof client.nodes === 'function' ? client.nodes('master') : [client as Redis];
  const total: Record<string, number> = {};
  for (const node of nodes) {
    for (const [name, calls] of Object.entries(parseCommandStats(await node.info('commandstats')))) {
      total[name] = (total[name] ?? 0) + calls;
    }
  }
  return total;
}

/** The commands called between two readings of {@link readCommandStats}, with how often. */
export function diffCommandStats(before: CommandCalls, after: CommandCalls): CommandCalls {
  const calls: Record<string, number> = {};
  for (const [name, count] of Object.entries(after)) {
    const delta = count - (before[name] ?? 0);
    if (delta > 0) calls[name] = delta;
  }
  return calls;
}
