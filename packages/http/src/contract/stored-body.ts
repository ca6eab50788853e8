import { withJsonText } from '@oncely/core/adapter';
import { isStringifyForm } from './stringify-form.js';

/** A response body: its bytes, or the string a framework holds, which goes out as its UTF-8 encoding. */
export type ResponseBody = Uint8Array | string;

const encoder = new TextEncoder();

/** The bytes a body goes out as. */
export const bodyBytes = (body: ResponseBody): Uint8Array => (typeof body === 'string' ? encoder.encode(body) : body);

/**
 * A response body as it is stored for replay (the store holds JSON): JSON as a JSON value when that
 * value serializes back to the very same bytes, UTF-8 text as a string, anything else as base64.
 * Every form decodes to the exact bytes first sent.
 */
export type StoredBody =
  | { readonly encoding: 'json'; readonly json: unknown }
  | { readonly encoding: 'text'; readonly text: string }
  | { readonly encoding: 'base64'; readonly base64: string };

// ignoreBOM keeps a leading byte-order mark in the text, so the bytes survive the round trip.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** `application/json`, `application/problem+json`, `application/vnd.x+json`... */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
/** Media types whose bytes are text: stored as a string when they are valid UTF-8. */
const TEXT_MEDIA_TYPE = /^(?:text\/[\w.+-]+|application\/(?:[\w.+-]+\+)?xml|application\/(?:javascript|x-www-form-urlencoded))$/;

/** A UTF-16 surrogate that is not part of a pair (the `u` flag keeps pairs whole). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** A string body as the text its UTF-8 bytes decode to: a lone surrogate goes out as U+FFFD. */
const sentText = (text: string): string => (LONE_SURROGATE.test(text) ? strictUtf8.decode(encoder.encode(text)) : text);

/** Media types by Content-Type value: a server sees a handful of them, read several times per request. */
const mediaTypes = new Map<string, string>();
const MAX_MEDIA_TYPES = 256;

/** The media type of a Content-Type value, lowercased and without parameters. */
export function mediaType(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  let type = mediaTypes.get(contentType);
  if (type === undefined) {
    type = contentType.split(';', 1)[0]!.trim().toLowerCase();
    // Bounded, for a client that sends a new value every time.
    if (mediaTypes.size === MAX_MEDIA_TYPES) mediaTypes.clear();
    mediaTypes.set(contentType, type);
  }
  return type;
}

/**
 * Encodes a body for storage; an empty body has no stored form. A string body is taken as text
 * without a trip through bytes, its lone surrogates made U+FFFD as UTF-8 encoding sends them.
 */
export function encodeBody(body: ResponseBody, contentType: string | undefined): StoredBody | undefined {
  if (body.length === 0) return undefined;
  const type = mediaType(contentType);
  const isJson = JSON_MEDIA_TYPE.test(type);
  if (isJson || TEXT_MEDIA_TYPE.test(type)) {
    const text = typeof body === 'string' ? sentText(body) : decodeUtf8(body);
    if (text !== undefined) {
      if (isJson) {
        if (isStringifyForm(text)) return new TextJsonBody(text);
        const json = parseJson(text);
        // Only a value that serializes back to the same bytes is stored as JSON (no lost digits or spaces);
        // those bytes are then its JSON text, so the engine need not serialize the body again.
        if (json.kind === 'parsed' && JSON.stringify(json.value) === text) {
          return withJsonText<StoredBody>({ encoding: 'json', json: json.value }, storedJsonText(text));
        }
      }
      return { encoding: 'text', text };
    }
  }
  return { encoding: 'base64', base64: toBase64(bodyBytes(body)) };
}

/** True when `value` is a {@link StoredBody} (and nothing more). */
export function isStoredBody(value: unknown): value is StoredBody {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const body = value as Record<string, unknown>;
  if (keys.length !== 2 || !keys.includes('encoding')) return false;
  switch (body.encoding) {
    case 'json':
      return 'json' in body;
    case 'text':
      return typeof body.text === 'string';
    case 'base64':
      return typeof body.base64 === 'string';
    default:
      return false;
  }
}

/** The bytes a stored body stands for. */
export function decodeBody(body: StoredBody): Uint8Array {
  switch (body.encoding) {
    case 'json':
      return encoder.encode(JSON.stringify(body.json));
    case 'text':
      return encoder.encode(body.text);
    case 'base64':
      return fromBase64(body.base64);
  }
}

/** Decodes UTF-8, or undefined when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** JSON.parse as a result instead of an exception. */
export function parseJson(text: string): { readonly kind: 'parsed'; readonly value: unknown } | { readonly kind: 'malformed' } {
  try {
    return { kind: 'parsed', value: JSON.parse(text) };
  } catch {
    return { kind: 'malformed' };
  }
}

/** The stored form's JSON around a body's own text, as `JSON.stringify` writes it. */
const storedJsonText = (text: string) => `{"encoding":"json","json":${text}}`;

/**
 * A JSON body known to be in `JSON.stringify`'s form: the engine stores its text as it is, and its
 * value is parsed only if something reads `json` (a `resourceId` callback, a replay policy).
 */
class TextJsonBody {
  static readonly #json: PropertyDescriptor = {
    enumerable: true,
    configurable: true,
    get(this: TextJsonBody) {
      const value: unknown = JSON.parse(this.#text);
      Object.defineProperty(this, 'json', { value, enumerable: true, configurable: true });
      return value;
    },
  };
  readonly encoding = 'json';
  declare readonly json: unknown;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
    Object.defineProperty(this, 'json', TextJsonBody.#json);
    withJsonText(this, storedJsonText(text));
  }
}

const CHUNK = 0x8000;

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let offset = 0; offset < bytes.length; offset += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(offset, offset + CHUNK));
  }
  return btoa(binary);
}

function fromBase64(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}
