const decoder = new TextDecoder();

/**
 * Reads a request's body once and hands the same object its body back: own `arrayBuffer`, `bytes`,
 * `text`, `json`, `blob`, `formData`, `body`, `bodyUsed` and `clone` serve the bytes read, each read
 * once as the Fetch standard allows. The handler keeps the very object it was given (a `NextRequest`
 * stays one, its other members untouched), and nothing tees the stream: `request.clone()` on Node
 * costs more than the rest of the contract together. A `clone()` of the handler's is a plain `Request`.
 */
export async function bufferBody(request: Request): Promise<Uint8Array> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  const contentType = request.headers.get('content-type') ?? '';
  let used = false;
  let stream: ReadableStream<Uint8Array> | undefined;
  const take = () => {
    if (used || stream?.locked) throw new TypeError('Body is unusable: Body has already been read');
    used = true;
  };
  const copy = () => bytes.slice();
  /** A body reader that marks the body used first, as every read of a Fetch body does. */
  const reader =
    <T>(read: () => T) =>
    async () => {
      take();
      return read();
    };
  const members: Record<string, unknown> = {
    arrayBuffer: reader(() => copy().buffer),
    bytes: reader(copy),
    text: reader(() => decoder.decode(bytes)),
    json: reader(() => JSON.parse(decoder.decode(bytes))),
    blob: reader(() => new Blob([copy()], { type: contentType })),
    formData: reader(() => new Response(copy(), { headers: { 'content-type': contentType } }).formData()),
    clone: () => {
      take();
      used = false;
      return new Request(request.url, { method: request.method, headers: request.headers, body: copy(), signal: request.signal });
    },
  };
  const properties: PropertyDescriptorMap = {
    bodyUsed: { configurable: true, get: () => used || (stream?.locked ?? false) },
    body: {
      configurable: true,
      get: () =>
        (stream ??= new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(copy());
            controller.close();
          },
        })),
    },
  };
  for (const [name, value] of Object.entries(members)) properties[name] = { configurable: true, writable: true, value };
  Object.defineProperties(request, properties);
  return bytes;
}
