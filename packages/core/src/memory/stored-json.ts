import type { StoredResponse } from '../store.js';

/** JSON text the engine attaches to a stored response for a store that keeps nothing but text. */
const META_JSON = Symbol('oncely.storedMetaJson');
const BODY_JSON = Symbol('oncely.storedBodyJson');

/** A stored response with the JSON text of its other members and of its body attached. */
type WithJson = StoredResponse & { [META_JSON]?: string; [BODY_JSON]?: string };

/** The stores that keep a response only as JSON text, never the object (`memoryStore()`, `redisStore()`). */
const textOnlyStores = new WeakSet<object>();

/**
 * Marks a store that serializes every response it is given (with {@link storedResponseJson}) and keeps
 * only the text: the engine then hands it the response with its JSON attached, not a parsed-back copy.
 */
export function markTextOnly(store: object): void {
  textOnlyStores.add(store);
}

/**
 * True for a store marked by {@link markTextOnly} itself, not a wrapper or a spread copy of one: only
 * those may be handed a response that is not a snapshot, since they read nothing of it but its JSON text.
 */
export function isTextOnly(store: object): boolean {
  return textOnlyStores.has(store);
}

/** Attaches the JSON of `stored` (which has no body yet) and `bodyJson`, the text of the body it is about to get. */
export function attachJson(stored: StoredResponse, bodyJson: string): void {
  (stored as WithJson)[META_JSON] = JSON.stringify(stored);
  (stored as WithJson)[BODY_JSON] = bodyJson;
}

/**
 * A response as two JSON texts, each a flat string (a joined text would be a rope of its parts, held
 * for the retention): its members with the body when nothing was attached, else without it, and the
 * attached body.
 */
export function responseJson(response: StoredResponse): string {
  return (response as WithJson)[META_JSON] ?? JSON.stringify(response);
}

/** The body's JSON text the engine attached, if it did. */
export function bodyJson(response: StoredResponse): string | undefined {
  return (response as WithJson)[BODY_JSON];
}

/** The whole response as one JSON text, `JSON.stringify(response)`, joined from what the engine attached when it did. */
export function storedResponseJson(response: StoredResponse): string {
  const meta = (response as WithJson)[META_JSON];
  const body = (response as WithJson)[BODY_JSON];
  if (meta === undefined) return JSON.stringify(response);
  // `meta` is an object with at least `status`: the body goes in as its last member, where stringify puts it.
  return body === undefined ? meta : `${meta.slice(0, -1)},"body":${body}}`;
}

const KNOWN_JSON = Symbol('oncely.knownJson');

/**
 * Marks `value` with `text`, which must be exactly `JSON.stringify(value)`: the engine stores that text
 * instead of serializing the value again (an HTTP binding has already checked a JSON body's bytes).
 * A non-enumerable symbol member, so JSON, `Object.keys` and deep equality never see it.
 */
export function withJsonText<T extends object>(value: T, text: string): T {
  Object.defineProperty(value, KNOWN_JSON, { value: text });
  return value;
}

/** The JSON text {@link withJsonText} attached to `value`, if any. */
export function jsonTextOf(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? (value as { [KNOWN_JSON]?: string })[KNOWN_JSON] : undefined;
}
