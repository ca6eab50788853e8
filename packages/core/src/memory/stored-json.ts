import type { StoredResponse } from '../store.js';

/** The JSON text of a stored response, set by the engine for a store that keeps nothing but that text. */
const STORED_JSON = Symbol('oncely.storedJson');

/** A stored response with its JSON text attached. */
type WithJson = StoredResponse & { [STORED_JSON]?: string };

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

/** Attaches the JSON text of `stored` with `bodyJson` as its body, the same text `JSON.stringify` writes. */
export function attachJson(stored: StoredResponse, bodyJson: string): void {
  // `stored` always has a status, so its JSON ends with `}` after at least one member.
  (stored as WithJson)[STORED_JSON] = `${JSON.stringify(stored).slice(0, -1)},"body":${bodyJson}}`;
}

/** The JSON text of a response: the one the engine attached, else serialized now. */
export function storedJson(response: StoredResponse): string {
  return (response as WithJson)[STORED_JSON] ?? JSON.stringify(response);
}
