import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenablePort, PRIVATE_PORTS, reachable, reachableAs, sleep } from '@oncely/test-support';
import amqp from 'amqplib';

/** The shared RabbitMQ: never restarted; tests declare and delete queues of their own. */
export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** Whether the shared broker is there; suites that need it skip, saying so in their title, when it is not. */
export const rabbitUp = await reachable(AMQP_URL, 5672);
export const suiteTitle = (title: string) => (rabbitUp ? title : `${title} (skipped: RabbitMQ unreachable at ${AMQP_URL})`);

/** A name no other run uses, for queues. */
export const uniqueName = (label: string) => `oncely.${label}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 7)}`;

export const connectRabbit = (url = AMQP_URL) => amqp.connect(url);

/**
 * Closes, server-side, every connection of the shared broker whose client-provided name is
 * `name` (amqplib's `clientProperties.connection_name`), and only those: one `rabbitmqctl eval`
 * lists and closes them. Resolves how many it closed.
 */
export async function closeConnectionsNamed(name: string): Promise<number> {
  const erlang = `[begin rabbit_networking:close_connection(Pid, "oncely connection storm"), Pid end || Pid <- rabbit_networking:connections(), [{client_properties, Props}] <- [rabbit_networking:connection_info(Pid, [client_properties])], lists:member({<<"connection_name">>, longstr, <<${JSON.stringify(name)}>>}, Props)].`;
  const closed = await new Promise<string>((resolve, reject) => {
    execFile('rabbitmqctl', ['-q', 'eval', erlang], { timeout: 30_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
  return closed.split('<').length - 1;
}

/** Deletes queues this run declared. */
export async function deleteQueues(connection: amqp.ChannelModel, queues: readonly string[]): Promise<void> {
  const channel = await connection.createChannel();
  for (const queue of queues) await channel.deleteQueue(queue).catch(() => undefined);
  await channel.close().catch(() => undefined);
}

/**
 * Every message now in `queue`, taken off it for inspection: consumed (basic.get is refused on
 * single-active-consumer quorum queues) until nothing arrives for `quietMs`.
 */
export async function drain(connection: amqp.ChannelModel, queue: string, quietMs = 300): Promise<amqp.ConsumeMessage[]> {
  const channel = await connection.createChannel();
  const found: amqp.ConsumeMessage[] = [];
  let last = Date.now();
  await channel.consume(
    queue,
    (message) => {
      if (message) {
        found.push(message);
        last = Date.now();
      }
    },
    { noAck: true },
  );
  while (Date.now() - last < quietMs) await new Promise((resolve) => setTimeout(resolve, 50));
  await channel.close();
  return found;
}

const run = (command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) =>
  new Promise<void>((resolve, reject) => {
    execFile(command, args, { env: { ...process.env, ...env }, timeout: 120_000 }, (error) => (error ? reject(error) : resolve()));
  });

/**
 * A private RabbitMQ node with its own name, data folder and config (the machine's config binds the
 * shared port), for tests that restart the broker: on the first two listenable ports (AMQP, then
 * Erlang distribution) of this package's range, 31360–31399.
 */
export async function privateRabbitNode() {
  const port = await listenablePort(PRIVATE_PORTS.rabbitmq, 40, 2);
  const dir = mkdtempSync(join(tmpdir(), 'oncely-rabbit-'));
  mkdirSync(join(dir, 'mnesia'));
  mkdirSync(join(dir, 'log'));
  writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.default = 127.0.0.1:${port}\nloopback_users = none\n`);
  writeFileSync(join(dir, 'plugins'), '[].\n');
  // rabbitmq-server drops to the rabbitmq user: the node's folders must be its own.
  await run('chown', ['-R', 'rabbitmq:rabbitmq', dir]).catch(() => undefined);
  const node = `oncely-${port}@localhost`;
  const env = {
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(port + 1),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'plugins'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
  };
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  const ctl = (...args: string[]) => run('rabbitmqctl', ['-q', '-n', node, ...args], env);
  // A run aborted mid-test can leave this node up (its app stopped by restart()): a second one of that name would not start.
  await ctl('stop').catch(() => undefined);
  await run('rabbitmq-server', ['-detached'], env);
  const crashDump = join(dir, 'log', 'erl_crash.dump');
  await reachableAs(url, true, 120_000, { failFast: () => crashed(url, crashDump) });
  return {
    url,
    /** Stops the broker application (every connection drops) and starts it again on the same data. */
    async restart() {
      await ctl('stop_app');
      await ctl('start_app');
      await reachableAs(url, true, 60_000);
    },
    async stop() {
      await ctl('stop').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A node that died at boot says why (its crash dump's slogan) instead of being waited out. */
async function crashed(url: string, crashDump: string): Promise<void> {
  if (!existsSync(crashDump)) return;
  await sleep(200); // the dump is written in one go; its slogan comes first
  const slogan = /^Slogan: (.*)$/m.exec(readFileSync(crashDump, 'utf8'))?.[1];
  throw new Error(`the private RabbitMQ node for ${url} died at boot: ${slogan ?? 'see ' + crashDump}`);
}
