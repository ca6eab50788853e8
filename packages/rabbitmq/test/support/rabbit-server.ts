import { createConnection } from 'node:net';
import amqp from 'amqplib';

/** The shared RabbitMQ: never restarted; tests declare and delete queues of their own. */
export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** True when something answers on the host and port of `url`. */
export function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 5672) });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Whether the shared broker is there; suites that need it skip, saying so in their title, when it is not. */
export const rabbitUp = await reachable(AMQP_URL);
export const suiteTitle = (title: string) => (rabbitUp ? title : `${title} (skipped: RabbitMQ unreachable at ${AMQP_URL})`);

/** A name no other run uses, for queues. */
export const uniqueName = (label: string) => `oncely.${label}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 7)}`;

export const connectRabbit = (url = AMQP_URL) => amqp.connect(url);

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
