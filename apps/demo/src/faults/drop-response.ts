import type { FastifyReply } from 'fastify';

/**
 * Makes the reply vanish: when Fastify writes the head (after every onSend hook, so after the
 * idempotency plugin committed), the socket is destroyed instead and no byte of a response leaves.
 */
export function dropResponse(reply: FastifyReply, onDrop: (status: number) => void): void {
  const raw = reply.raw;
  raw.writeHead = ((status: number) => {
    onDrop(status);
    raw.socket?.destroy();
    return raw;
  }) as typeof raw.writeHead;
  raw.write = (() => true) as typeof raw.write;
  raw.end = (() => raw) as typeof raw.end;
}
