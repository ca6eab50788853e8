import type { IncomingHttpHeaders } from 'node:http';

/** True when a request carries a body (a non-zero Content-Length or any Transfer-Encoding), as RFC 9112 §6.3 frames it. */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
