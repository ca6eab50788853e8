import type { Response } from 'express';
import type { HttpReply } from '../contract/http-reply.js';

/** Writes a reply the contract built: status, headers, and the body with its length. */
export function writeReply(res: Response, reply: HttpReply): void {
  res.statusCode = reply.status;
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  if (reply.body === undefined) {
    res.end();
    return;
  }
  res.setHeader('content-length', reply.body.length);
  res.end(Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength));
}

/** Removes every header the handler added since `names` was taken, before answering with a problem. */
export function restoreHeaderNames(res: Response, names: ReadonlySet<string>): void {
  for (const name of res.getHeaderNames()) if (!names.has(name)) res.removeHeader(name);
}
