import { type ParsedBody, refusedMediaType } from '../contract/parsed-body.js';
import { handOverJson, holdBody } from './buffered-request.js';
import { unreadBody } from './unread-body.js';
import { searchParamsObject } from '../contract/request-fingerprint.js';
import { decodeUtf8, mediaType, parseJson } from '../contract/stored-body.js';

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

/**
 * Reads a fetch request's body and hands it back to the same request (see {@link holdBody}): JSON
 * as a value, form data as an object, text as a string, anything else as bytes. Unreadable JSON is
 * `malformed`. With `handOver`, the handler's first `json()` gets the very value parsed here
 * (see {@link handOverJson}) instead of a second parse of the same bytes.
 */
export async function readFetchBody(request: Request, handOver = false): Promise<ParsedBody> {
  if (request.body === null) return { kind: 'parsed', value: undefined };
  // Bytes still held unread are unused by definition: `bodyUsed` is asked only of a body that must be read.
  const unread = unreadBody(request);
  if (unread === undefined && request.bodyUsed) return { kind: 'malformed', detail: 'The request body was read before the idempotency wrapper could read it.' };
  const contentType = request.headers.get('content-type') ?? undefined;
  const parsed = parseBodyBytes(holdBody(request, unread ?? new Uint8Array(await request.arrayBuffer())), contentType);
  if (handOver && parsed.kind === 'parsed' && JSON_MEDIA_TYPE.test(mediaType(contentType))) handOverJson(request, parsed.value);
  return parsed;
}

/** A body's bytes as the contract fingerprints them, by their declared content type; `onText` sees the text decoded on the way. */
export function parseBodyBytes(bytes: Uint8Array, contentType: string | undefined, onText?: (text: string) => void): ParsedBody {
  const refused = refusedMediaType(contentType);
  if (refused) return refused;
  if (bytes.length === 0) return { kind: 'parsed', value: undefined };
  const type = mediaType(contentType);
  if (JSON_MEDIA_TYPE.test(type)) {
    const text = decodeUtf8(bytes);
    if (text !== undefined) onText?.(text);
    const json = text === undefined ? undefined : parseJson(text);
    return json?.kind === 'parsed'
      ? { kind: 'parsed', value: json.value }
      : { kind: 'malformed', detail: 'The request body is declared as JSON but is not valid UTF-8 JSON.' };
  }
  if (type === 'application/x-www-form-urlencoded' || type.startsWith('text/')) {
    const text = decodeUtf8(bytes);
    if (text !== undefined) {
      onText?.(text);
      return {
        kind: 'parsed',
        value: type.startsWith('text/') ? text : (searchParamsObject(new URLSearchParams(text)) ?? {}),
      };
    }
  }
  return { kind: 'parsed', value: bytes };
}
