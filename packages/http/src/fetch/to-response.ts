import type { HttpReply } from '../contract/http-reply.js';

/** Statuses that must not carry a body (RFC 9110). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A fetch Response with the given status, headers and bytes (no body where the status forbids one). */
export function bytesResponse(status: number, headers: HeadersInit, body: Uint8Array | undefined, statusText?: string): Response {
  const content = NULL_BODY_STATUSES.has(status) || body === undefined ? null : body;
  return new Response(content as BodyInit | null, { status, headers, ...(statusText ? { statusText } : {}) });
}

/** The fetch Response for a reply the contract built. */
export function toResponse(reply: HttpReply): Response {
  return bytesResponse(reply.status, reply.headers, reply.body);
}

/** Headers of a fetch Response as a record; set-cookie stays a list. */
export function headersRecord(headers: Headers): Record<string, string | readonly string[]> {
  const out: Record<string, string | readonly string[]> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}
