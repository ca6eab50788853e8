import type { ResponseHeaders } from './http-reply.js';
import { mediaType, type ResponseBody } from './stored-body.js';

/**
 * A handler's response as a binding captured it: complete (every byte buffered), or streaming, which
 * the contract refuses because an unbounded stream can be neither stored nor replayed.
 */
export type CapturedResponse =
  | { readonly kind: 'complete'; readonly status: number; readonly headers: ResponseHeaders; readonly body: ResponseBody }
  | { readonly kind: 'streaming'; readonly status: number; readonly headers: ResponseHeaders };

/** One value of a header, whatever shape the framework reports it in. */
export function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return typeof value === 'string' ? value : value?.[0];
}

/** Server-sent events: a response that never ends by design. */
export function isEventStream(contentType: unknown): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return typeof value === 'string' && mediaType(value) === 'text/event-stream';
}

/** Framework header maps (numbers, arrays, undefined) as strings and arrays, names lowercased. */
export function normalizeHeaders(headers: Readonly<Record<string, unknown>>): ResponseHeaders {
  const out: Record<string, string | readonly string[]> = {};
  // for...in, not Object.entries: no array of pairs per response.
  for (const name in headers) {
    if (!Object.hasOwn(headers, name)) continue;
    const value = headers[name];
    if (value === undefined || value === null) continue;
    out[name.toLowerCase()] = typeof value === 'string' ? value : Array.isArray(value) ? value.map(String) : String(value);
  }
  return out;
}
