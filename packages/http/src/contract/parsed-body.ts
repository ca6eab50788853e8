import { mediaType } from './stored-body.js';

/**
 * A request body as the binding read it: parsed (object, string, bytes, undefined), malformed
 * (declared JSON that is not), too large to read, or unsupported (a body no fingerprint can stand for).
 */
export type ParsedBody =
  | { readonly kind: 'parsed'; readonly value: unknown }
  | { readonly kind: 'malformed'; readonly detail: string }
  | { readonly kind: 'too-large'; readonly detail: string }
  | { readonly kind: 'unsupported'; readonly detail: string; readonly value?: unknown };

const MULTIPART: Extract<ParsedBody, { kind: 'unsupported' }> = {
  kind: 'unsupported',
  detail:
    'A multipart body cannot be fingerprinted (its boundary and part headers change from one send to the next), so a retry could not be told from a new request. Send the fields as JSON or application/x-www-form-urlencoded.',
};

/** Multipart bodies are refused on keyed requests by every binding, parsed or not. */
export function refusedMediaType(contentType: string | undefined): Extract<ParsedBody, { kind: 'unsupported' }> | undefined {
  return mediaType(contentType).startsWith('multipart/') ? MULTIPART : undefined;
}

/**
 * A body the framework already parsed (JSON value, form object, string or Buffer). `undefined` with
 * a body on the wire means no parser read it: fingerprinting nothing would let different bodies
 * replay each other, so a keyed request with it is refused.
 */
export function frameworkBody(value: unknown, contentType: string | undefined, hasBody: boolean): ParsedBody {
  const refused = refusedMediaType(contentType);
  if (refused) return { kind: 'unsupported', detail: refused.detail, value };
  if (value === undefined && hasBody) {
    return {
      kind: 'unsupported',
      value,
      detail: `No body parser read this ${mediaType(contentType) || 'untyped'} body, so it cannot be fingerprinted. Send JSON, form fields or text, or add a parser for this type before the idempotency middleware.`,
    };
  }
  return { kind: 'parsed', value };
}
