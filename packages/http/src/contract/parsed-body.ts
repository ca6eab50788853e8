import type { ParsedBody } from './handle-exchange.js';

/** A body the framework already parsed (JSON value, form object, string or Buffer). */
export async function parsedBody(value: unknown): Promise<ParsedBody> {
  return { kind: 'parsed', value };
}
