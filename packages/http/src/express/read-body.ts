import type { Request } from 'express';
import { frameworkBody, type ParsedBody, refusedMediaType } from '../contract/parsed-body.js';
import { parseBodyBytes } from '../fetch/read-body.js';
import { hasBody } from '../node/has-body.js';

/** Largest body the middleware reads itself when no parser ran (Fastify's default `bodyLimit`). */
export const MAX_READ_BODY_BYTES = 1_048_576;

/** What {@link readExpressBody} answers for a body over {@link MAX_READ_BODY_BYTES}. */
export const TOO_LARGE: ParsedBody = { kind: 'too-large', detail: `The request body is larger than ${MAX_READ_BODY_BYTES} bytes.` };

/** The request stream, read whole unless it grows past `limit` bytes. */
function readStream(req: Request, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

/**
 * The body of an Express request: what a body parser left in `req.body`, or, when none read it,
 * the body read and parsed here (JSON, form fields, text, else bytes) and left in `req.body` for
 * the handler, as a parser would. Reading it here means a malformed body gets the contract's
 * problem+json instead of Express's HTML error page.
 */
export function readExpressBody(req: Request): ParsedBody | Promise<ParsedBody> {
  const contentType = req.headers['content-type'];
  // body-parser marks what it read with `_body`; another reader (multer...) leaves the stream ended.
  if ((req as { _body?: boolean })._body === true) return frameworkBody(req.body, contentType, false);
  if (!hasBody(req.headers) || req.readableEnded || refusedMediaType(contentType)) {
    return frameworkBody(req.body, contentType, hasBody(req.headers));
  }
  return readAndParse(req, contentType);
}

/** The body read here because no parser did, parsed and left in `req.body`. */
async function readAndParse(req: Request, contentType: string | undefined): Promise<ParsedBody> {
  const bytes = await readStream(req, MAX_READ_BODY_BYTES);
  if (bytes === undefined) return TOO_LARGE;
  const parsed = parseBodyBytes(bytes, contentType);
  if (parsed.kind === 'parsed') {
    req.body = parsed.value instanceof Uint8Array ? bytes : parsed.value;
    (req as { _body?: boolean })._body = true;
  }
  return parsed;
}
