import type { JsonValue } from '@oncely/core/journal';
import { DEFAULT_REPLAYED_HEADERS } from '../contract/replayed-headers.js';
import { decodeBody, encodeBody, isStoredBody, type StoredBody } from '../contract/stored-body.js';

/** A response as the journal keeps it: status, the replayable headers and the body bytes. */
export interface JournaledResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: readonly (readonly [string, string])[];
  /** Absent for an empty body, or when it was larger than the limit (`bodyOmitted`). */
  readonly body?: StoredBody;
  readonly bodyOmitted?: true;
}

const REPLAYED = new Set(DEFAULT_REPLAYED_HEADERS);
/** Statuses whose responses cannot carry a body. */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/**
 * Reads up to `limit` bytes of a response through a clone, leaving the response itself unread for
 * the caller. Returns undefined when the body is longer than the limit (the clone is cancelled).
 */
export async function captureBody(response: Response, limit: number, signal: AbortSignal): Promise<Uint8Array | undefined> {
  const reader = response.clone().body?.getReader();
  if (!reader) return new Uint8Array(0);
  const onAbort = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return undefined;
      }
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  signal.throwIfAborted();
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** The journal's form of a response whose body was captured (undefined: over the limit). */
export function toJournaled(response: Response, bytes: Uint8Array | undefined): JsonValue {
  const headers: [string, string][] = [];
  response.headers.forEach((value, name) => {
    if (REPLAYED.has(name)) headers.push([name, value]);
  });
  const body = bytes && encodeBody(bytes, response.headers.get('content-type') ?? undefined);
  const journaled: JournaledResponse = {
    status: response.status,
    statusText: response.statusText,
    headers,
    ...(body ? { body } : {}),
    ...(bytes === undefined ? { bodyOmitted: true as const } : {}),
  };
  return journaled as unknown as JsonValue;
}

/** True when a journal value is a {@link JournaledResponse}. */
export function isJournaledResponse(value: unknown): value is JournaledResponse {
  const candidate = value as Partial<JournaledResponse> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    Number.isInteger(candidate.status) &&
    Array.isArray(candidate.headers) &&
    (candidate.body === undefined || isStoredBody(candidate.body))
  );
}

/** Rebuilds the response an earlier run recorded. */
export function fromJournaled(journaled: JournaledResponse): Response {
  const bytes = journaled.body && !NULL_BODY_STATUS.has(journaled.status) ? decodeBody(journaled.body) : null;
  return new Response(bytes as BodyInit | null, {
    status: journaled.status,
    statusText: journaled.statusText,
    headers: journaled.headers.map(([name, value]) => [name, value] as [string, string]),
  });
}
