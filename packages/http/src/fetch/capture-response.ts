import { type CapturedResponse, isEventStream } from '../contract/captured-response.js';
import { lightweightBody } from './lightweight-response.js';
import { bytesResponse, headersRecord } from './to-response.js';

/** A fetch handler's response, read whole: what the contract stores, and the response to send on. */
export interface FetchCapture {
  readonly captured: CapturedResponse;
  /** The handler's response again, over the bytes that were read, with `headers` added (a stream refused has none). */
  readonly original: (headers: Readonly<Record<string, string>>) => Response;
}

/**
 * Reads a handler's Response once; a `text/event-stream` body is cancelled and reported as streaming.
 * A body `@hono/node-server` still holds as bytes or a string is taken from there ({@link lightweightBody}).
 */
export async function captureFetchResponse(response: Response): Promise<FetchCapture> {
  const headers = headersRecord(response.headers);
  if (isEventStream(response.headers.get('content-type'))) {
    await response.body?.cancel();
    return { captured: { kind: 'streaming', status: response.status, headers }, original: () => response };
  }
  const unread = lightweightBody(response);
  if (unread !== undefined) {
    // The body was never consumed: the handler's own Response goes to the client, headers added in place.
    return {
      captured: { kind: 'complete', status: response.status, headers, body: unread },
      original: (extra) => {
        for (const [name, value] of Object.entries(extra)) response.headers.set(name, value);
        return response;
      },
    };
  }
  const body = new Uint8Array(await response.arrayBuffer());
  return {
    captured: { kind: 'complete', status: response.status, headers, body },
    original: (extra) => {
      const sent = bytesResponse(response.status, response.headers, body, response.statusText);
      for (const [name, value] of Object.entries(extra)) sent.headers.set(name, value);
      return sent;
    },
  };
}
