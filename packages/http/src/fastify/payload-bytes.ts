/**
 * Reads whatever Fastify hands to onSend (string, Buffer, typed array, Node or web stream, null) as
 * bytes: at once for what is already in memory, as a promise only for a stream.
 */
export function payloadBytes(payload: unknown): Uint8Array | Promise<Uint8Array> {
  if (payload === null || payload === undefined) return new Uint8Array();
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (payload instanceof Uint8Array) return payload;
  if (ArrayBuffer.isView(payload)) return new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
  if (typeof (payload as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') return streamBytes(payload as AsyncIterable<string | Uint8Array>);
  throw new TypeError('oncely/http: cannot read this reply payload as bytes');
}

async function streamBytes(payload: AsyncIterable<string | Uint8Array>): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of payload) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
