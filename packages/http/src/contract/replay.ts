import type { IdempotentResponse } from '@oncely/core';
import { type CapturedResponse, headerValue } from './captured-response.js';
import type { HttpReply, ResponseHeaders } from './http-reply.js';
import type { ContractConfig } from './options.js';
import { decodeBody, encodeBody, isStoredBody } from './stored-body.js';

/** The header that marks a replayed response (Stripe and the IETF draft's implementations use it). */
export const REPLAYED_HEADER = 'idempotent-replayed';

const encoder = new TextEncoder();

/** The allowlisted headers, names lowercased, multiple values joined as HTTP allows. */
function allowedHeaders(headers: ResponseHeaders, allow: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    if (!Object.hasOwn(headers, name)) continue;
    const lower = name.toLowerCase();
    const value = headers[name]!;
    if (allow.has(lower)) out[lower] = typeof value === 'string' ? value : value.join(', ');
  }
  return out;
}

/** What the engine stores for a complete response: status, allowlisted headers, encoded body, resource id. */
export function toIdempotentResponse<Req>(
  config: ContractConfig<Req>,
  captured: Extract<CapturedResponse, { kind: 'complete' }>,
): IdempotentResponse {
  const body = encodeBody(captured.body, headerValue(captured.headers, 'content-type'));
  const resourceId = config.resourceId?.({ status: captured.status, headers: captured.headers, body });
  const response: { -readonly [K in keyof IdempotentResponse]: IdempotentResponse[K] } = {
    status: captured.status,
    headers: allowedHeaders(captured.headers, config.replayHeaders),
    body,
  };
  if (resourceId !== undefined) response.resourceId = resourceId;
  return response;
}

/**
 * The reply for a replay: stored status, allowlisted headers and body, plus `Idempotent-Replayed`.
 * A body the engine rebuilt (`reference` strategy) may be a plain JSON value instead of a stored body.
 * A body omitted as too large replays as status and headers with no content.
 */
export function replayReply<Req>(config: ContractConfig<Req>, response: IdempotentResponse): HttpReply {
  const headers = allowedHeaders(response.headers ?? {}, config.replayHeaders);
  let body: Uint8Array | undefined;
  if (response.body === undefined) {
    delete headers['content-type'];
    delete headers['content-encoding'];
  } else if (isStoredBody(response.body)) {
    body = decodeBody(response.body);
  } else {
    body = encoder.encode(JSON.stringify(response.body));
    headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  headers[REPLAYED_HEADER] = 'true';
  return { status: response.status, headers, ...(body === undefined ? {} : { body }) };
}
