import type { StoredResponse } from '../store.js';

/** JSON text the engine attaches to a stored response for a store that keeps nothing but text. */
const META_JSON = Symbol('oncely.storedMetaJson');
const BODY_JSON = Symbol('oncely.storedBodyJson');

/** A stored response with the JSON text of its other members and of its body attached. */
type WithJson = StoredResponse & { [META_JSON]?: string; [BODY_JSON]?: string };

/** The memory stores made by `memoryStore()`: they keep a response only as JSON text, never the object. */
const textOnlyStores = new WeakSet<object>();

/** Marks a store that serializes every response it is given and keeps only the text. */
export function markTextOnly(store: object): void {
  textOnlyStores.add(store);
}

/**
 * True for a store made by `memoryStore()` itself, not a wrapper or a spread copy of one: only those
 * may be handed a response that is not a snapshot, since they read nothing of it but its JSON text.
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
