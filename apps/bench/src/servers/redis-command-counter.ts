import { Redis } from 'ioredis';

/** What the Redis server saw while some work ran. */
export interface RedisTraffic {
  /** Commands sent by clients (MONITOR, script-internal calls excluded), by lower-case name. */
  readonly sent: ReadonlyMap<string, number>;
  /** Commands executed according to `INFO commandstats` (calls + rejected), script-internal included. */
  readonly executed: ReadonlyMap<string, number>;
  /** Commands run inside Lua scripts (MONITOR lines whose source is `lua`). */
  readonly scriptInternal: number;
}

/** The counter's own commands, never part of the measured work. */
const OWN_COMMANDS = new Set(['info', 'echo', 'monitor']);

/** Parses `INFO commandstats` into calls + rejected calls per command. */
export function parseCommandStats(info: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of info.split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):(.*)$/.exec(line.trim());
    if (!match) continue;
    const fields = Object.fromEntries(match[2]!.split(',').map((pair) => pair.split('=') as [string, string]));
    counts.set(match[1]!.toLowerCase(), Number(fields.calls ?? 0) + Number(fields.rejected_calls ?? 0));
  }
  return counts;
}

/** Per-command difference `after - before`, without zero entries and without the counter's own commands. */
export function commandDelta(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, count] of after) {
    const diff = count - (before.get(name) ?? 0);
    if (diff !== 0 && !OWN_COMMANDS.has(name)) delta.set(name, diff);
  }
  return delta;
}

/** Sum of a command map. */
export function totalCommands(counts: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const count of counts.values()) total += count;
  return total;
}

/**
 * Runs `work` and reports the commands the server received (MONITOR) and executed (INFO
 * commandstats). The server must serve nobody else meanwhile: use a private server.
 */
export async function countRedisCommands(url: string, work: () => Promise<void>): Promise<RedisTraffic> {
  const admin = new Redis(url);
  // ioredis opens a dedicated connection for MONITOR.
  const monitor = await admin.monitor();
  const sent = new Map<string, number>();
  let scriptInternal = 0;
  const marker = `bench-marker-${process.pid}-${Date.now()}`;
  let markerSeen: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => {
    markerSeen = resolve;
  });
  let counting = true;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    // Lines still buffered after the marker belong to later work.
    if (!counting) return;
    const name = String(args[0]).toLowerCase();
    if (name === 'echo' && args[1] === marker) {
      counting = false;
      return markerSeen();
    }
    if (OWN_COMMANDS.has(name)) return;
    if (source === 'lua') scriptInternal++;
    else sent.set(name, (sent.get(name) ?? 0) + 1);
  });
  try {
    const before = parseCommandStats(await admin.info('commandstats'));
    await work();
    // MONITOR streams in execution order: once the marker arrives, every earlier command has too.
    await admin.echo(marker);
    await drained;
    const after = parseCommandStats(await admin.info('commandstats'));
    return { sent, executed: commandDelta(before, after), scriptInternal };
  } finally {
    monitor.disconnect();
    admin.disconnect();
  }
}
