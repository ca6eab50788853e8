import { type CapturedResponse, headerValue, isEventStream } from '../contract/captured-response.js';
import { bodyBytes, type ResponseBody } from '../contract/stored-body.js';
import { unreadContent, unreadHeaders } from './unread-body.js';
import { bytesResponse, headersRecord } from './to-response.js';

/** A fetch handler's response, read whole: what the contract stores, and the response to send on. */
export interface FetchCapture {
  readonly captured: CapturedResponse;
  /** The handler's response again, over the bytes that were read, with `headers` added (a stream refused has none). */
  readonly original: (headers: Readonly<Record<string, string>>) => Response;
}

/**
 * Reads a handler's Response once; a `text/event-stream` body is cancelled and reported as streaming.
 * A body still held as a string or bytes (undici, `@hono/node-server`) is taken from there unread ({@link unreadContent}).
 */
export async function captureFetchResponse(response: Response): Promise<FetchCapture> {
  // Headers still held as a record are read from there, so the handler's response is left as it was.
  const held = unreadHeaders(response);
  if (held !== undefined && !isEventStream(headerValue(held, 'content-type'))) {
    const unread = unreadContent(response);
    if (unread !== undefined) {
      return {
        captured: { kind: 'complete', status: response.status, headers: held, body: unread },
        original: (extra) => (isEmpty(extra) ? response : rebuilt(response, unread, extra)),
      };
    }
  }
  const headers = headersRecord(response.headers);
  if (isEventStream(response.headers.get('content-type'))) {
    await response.body?.cancel();
    return { captured: { kind: 'streaming', status: response.status, headers }, original: () => response };
  }
  const unread = unreadContent(response);
  if (unread !== undefined) {
    // Never consumed, so the handler's own Response goes on; headers are added to a copy (its own may be immutable).
    return {
      captured: { kind: 'complete', status: response.status, headers, body: unread },
      original: (extra) => (isEmpty(extra) ? response : rebuilt(response, unread, extra)),
    };
  }
  const body = new Uint8Array(await response.arrayBuffer());
  return {
    captured: { kind: 'complete', status: response.status, headers, body },
    original: (extra) => rebuilt(response, body, extra),
  };
}

function isEmpty(record: Readonly<Record<string, string>>): boolean {
  for (const _ in record) return false;
  return true;
}

/** The handler's response over `body`, with `extra` headers added. */
function rebuilt(response: Response, content: ResponseBody, extra: Readonly<Record<string, string>>): Response {
  // Bytes, not a string, which would make the new Response add a text/plain content type the handler's may not have.
  const body = bodyBytes(content);
  if (isEmpty(extra)) return bytesResponse(response.status, response.headers, body, response.statusText);
  // A copy: @hono/node-server's Response keeps the Headers it is given, and a redirect's are immutable.
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return bytesResponse(response.status, headers, body, response.statusText);
}
