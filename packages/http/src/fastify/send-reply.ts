import type { FastifyReply } from 'fastify';
import type { HttpReply } from '../contract/http-reply.js';

/** A Node Buffer over the same bytes (Fastify sends Buffers as they are). */
export function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Sends a reply the contract built. */
export function sendReply(reply: FastifyReply, value: HttpReply): FastifyReply {
  return reply
    .code(value.status)
    .headers(value.headers)
    .send(value.body === undefined ? undefined : toBuffer(value.body));
}

/** Removes every header the handler added since `names` was taken, before answering with a problem. */
export function restoreHeaderNames(reply: FastifyReply, names: ReadonlySet<string>): void {
  for (const name of Object.keys(reply.getHeaders())) if (!names.has(name)) reply.removeHeader(name);
}
