import { seedKeys } from '../harness/workload-runs.js';
import { countRedisCommands, type RedisTraffic, totalCommands } from '../servers/redis-command-counter.js';
import type { Operations } from '../subjects/operations.js';

/** Commands per operation, as the server counted them. */
export interface CommandsPerOperation {
  /** Commands the client sent per operation (round trips when nothing is pipelined). */
  readonly sent: number;
  /** Commands executed per operation by `INFO commandstats`, Lua-internal calls included. */
  readonly executed: number;
  /** `INFO commandstats` per command, per operation, e.g. `evalsha 1.00`. */
  readonly breakdown: string;
}

function perOperation(traffic: RedisTraffic, ops: number): CommandsPerOperation {
  const breakdown = [...traffic.executed]
    .sort((a, b) => b[1] - a[1])
    // A one-off (the first EVAL that loads a script) shows as <0.01 rather than a puzzling 0.00.
    .map(([name, count]) => `${name} ${count / ops < 0.005 ? '<0.01' : (count / ops).toFixed(2)}`)
    .join(', ');
  return {
    sent: totalCommands(traffic.sent) / ops,
    executed: totalCommands(traffic.executed) / ops,
    breakdown,
  };
}

/** Counts the commands of `count` sequential first requests, then of `count` replays. */
export async function countCommands(
  redisUrl: string,
  ops: Operations,
  keyPrefix: string,
  count: number,
): Promise<{ first: CommandsPerOperation; replay: CommandsPerOperation }> {
  const firstTraffic = await countRedisCommands(redisUrl, async () => {
    for (let i = 0; i < count; i++) await ops.first(`${keyPrefix}-count-${i}`);
    await ops.settle();
  });
  const keys = await seedKeys(ops, `${keyPrefix}-count-replay`, count);
  const replayTraffic = await countRedisCommands(redisUrl, async () => {
    for (const key of keys) await ops.replay(key);
  });
  return { first: perOperation(firstTraffic, count), replay: perOperation(replayTraffic, count) };
}
