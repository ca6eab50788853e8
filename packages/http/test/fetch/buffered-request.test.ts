import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bufferBody } from '../../src/fetch/buffered-request.js';
import { readFetchBody } from '../../src/fetch/read-body.js';

const request = (body: string, type = 'text/plain; charset=utf-8') =>
  new Request('http://localhost/payments', { method: 'POST', headers: { 'content-type': type }, body });

describe('bufferBody', () => {
  it('gives the same request its body back for any one reader, then refuses a second read as the Fetch standard does', async () => {
    const readers = ['text', 'json', 'arrayBuffer', 'bytes', 'blob', 'stream'] as const;
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.constantFrom(...readers), async (value, reader) => {
        const text = JSON.stringify(value) ?? 'null';
        const original = request(text, 'application/json');
        const read = await bufferBody(original);
        expect(new TextDecoder().decode(read)).toBe(text);
        expect(original.bodyUsed).toBe(false);
        const decode = (bytes: ArrayBuffer | Uint8Array) => new TextDecoder().decode(bytes);
        const got =
          reader === 'text'
            ? await original.text()
            : reader === 'json'
              ? JSON.stringify(await original.json())
              : reader === 'arrayBuffer'
                ? decode(await original.arrayBuffer())
                : reader === 'bytes'
                  ? decode(await (original as Request & { bytes(): Promise<Uint8Array> }).bytes())
                  : reader === 'blob'
                    ? await (await original.blob()).text()
                    : await new Response(original.body).text();
        expect(reader === 'json' ? JSON.parse(got) : got).toEqual(reader === 'json' ? JSON.parse(text) : text);
        expect(original.bodyUsed).toBe(true);
        await expect(original.text()).rejects.toThrow(TypeError);
      }),
      { numRuns: 60 },
    );
  });

  it('keeps the request object and its other members: headers, url, method, signal, and its class', async () => {
    class PlatformRequest extends Request {
      get platform() {
        return 'edge';
      }
    }
    const original = new PlatformRequest('http://localhost/payments?x=1', { method: 'PUT', headers: { 'x-a': '1' }, body: 'a=1&a=2' });
    await bufferBody(original);
    expect(original).toBeInstanceOf(PlatformRequest);
    expect(original.platform).toBe('edge');
    expect(original.url).toBe('http://localhost/payments?x=1');
    expect(original.method).toBe('PUT');
    expect(original.headers.get('x-a')).toBe('1');
    const copy = original.clone();
    expect(await copy.text()).toBe('a=1&a=2');
    expect(await original.text()).toBe('a=1&a=2');
  });

  it('keeps each request its own bytes and state, whatever order requests of one class are buffered and read in', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string(), { minLength: 2, maxLength: 6 }), fc.boolean(), async (texts, reverse) => {
        const requests = texts.map((text) => request(text));
        for (const each of requests) await bufferBody(each);
        const order = reverse ? [...requests.keys()].reverse() : [...requests.keys()];
        for (const index of order) {
          expect(requests[index]!.bodyUsed).toBe(false);
          expect(await requests[index]!.text()).toBe(texts[index]);
          expect(requests[index]!.bodyUsed).toBe(true);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('reads form data with the request content type', async () => {
    const original = request('amount=10&currency=eur', 'application/x-www-form-urlencoded');
    await bufferBody(original);
    const form = await original.formData();
    expect(form.get('amount')).toBe('10');
    expect(form.get('currency')).toBe('eur');
  });

  it('reads a body sent as a stream, as one built from bytes or a string, to the same bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.constantFrom('stream', 'bytes', 'string'), async (text, form) => {
        const bytes = new TextEncoder().encode(text);
        const body =
          form === 'string'
            ? text
            : form === 'bytes'
              ? bytes
              : new ReadableStream<Uint8Array>({
                  start(controller) {
                    controller.enqueue(bytes);
                    controller.close();
                  },
                });
        const original = new Request('http://localhost/payments', { method: 'POST', body, duplex: 'half' } as RequestInit);
        expect(await bufferBody(original)).toEqual(bytes);
        expect(await original.text()).toBe(text);
      }),
      { numRuns: 60 },
    );
  });

  it("hands the JSON value the contract parsed to the handler's first json(), once; without the hand-over json() parses its own", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const text = JSON.stringify(value) ?? 'null';
        const handedOver = request(text, 'application/json');
        const read = await readFetchBody(handedOver, true);
        expect(read.kind).toBe('parsed');
        const first = await handedOver.json();
        expect(first).toEqual(JSON.parse(text));
        // The very value the contract fingerprinted, not a second parse of the same bytes.
        if (typeof first === 'object' && first !== null) expect(first).toBe((read as { value: unknown }).value);
        expect(handedOver.bodyUsed).toBe(true);
        await expect(handedOver.json()).rejects.toThrow(TypeError);

        const own = request(text, 'application/json');
        const ownRead = await readFetchBody(own);
        const parsedAgain = await own.json();
        expect(parsedAgain).toEqual(JSON.parse(text));
        if (typeof parsedAgain === 'object' && parsedAgain !== null) expect(parsedAgain).not.toBe((ownRead as { value: unknown }).value);
      }),
      { numRuns: 60 },
    );
  });
});
