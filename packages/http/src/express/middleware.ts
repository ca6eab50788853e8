import { type IdempotencyStore, OncelyError, type TransactionOf } from '@oncely/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { handleExchange } from '../contract/handle-exchange.js';
import { IDEMPOTENCY_KEY_HEADER } from '../contract/idempotency-key-header.js';
import { type IdempotencyContext, type IdempotencyHttpOptions, resolveOptions } from '../contract/options.js';
import { CloseSignal } from '../node/close-signal.js';
import { captureResponse, type ResponseCapture } from './capture-response.js';
import { readExpressBody } from './read-body.js';
import { restoreHeaderNames, writeReply } from './write-reply.js';

/** Options of {@link expressIdempotency}: `scope`, `operation` and `validate` receive Express's `req`. */
export type ExpressIdempotencyOptions<S extends IdempotencyStore = IdempotencyStore> = IdempotencyHttpOptions<Request, S>;

// On the request under a symbol: a WeakMap entry per request costs the collector more than a property.
const CONTEXT = Symbol('oncely.expressContext');
type WithContext = Request & { [CONTEXT]?: IdempotencyContext };

const UNKEYED: IdempotencyContext = Object.freeze({ kind: 'unkeyed' });

/**
 * The idempotency context of a request that went through {@link expressIdempotency}: the claim it
 * holds (in `transaction` mode, with the open transaction as `tx`), or `unkeyed`.
 */
export function expressIdempotencyContext<Tx = unknown>(req: Request): IdempotencyContext<Tx> {
  const context = (req as WithContext)[CONTEXT];
  if (!context) {
    throw new OncelyError('invalid_state', 'oncely/http: expressIdempotency did not run for this request');
  }
  return context as IdempotencyContext<Tx>;
}

/**
 * Express middleware for one route, before the handler. It reads the body itself when no parser
 * did (JSON, form fields, text or bytes, left in `req.body`), so a malformed body is a problem+json
 * answer; after a parser of your own it uses `req.body`. The handler's response
 * (`res.status/json/send/write/end`, headers included) is held until the outcome is recorded, then
 * sent; retries replay it.
 *
 * ```ts
 * app.post('/payments', expressIdempotency({ engine, operation: 'payments.create.v1', scope }), createPayment);
 * ```
 */
export function expressIdempotency<S extends IdempotencyStore>(options: ExpressIdempotencyOptions<S>): RequestHandler {
  const config = resolveOptions(options);
  return (req: Request, res: Response, next: NextFunction) => {
    const cancellation = new CloseSignal(res);
    let capture: ResponseCapture | undefined;
    // Names only: the set is built on the rare path that removes the handler's headers.
    let headerNames: readonly string[] = [];
    handleExchange(
      config,
      {
        request: req,
        method: req.method,
        url: req.originalUrl,
        idempotencyKey: req.headers[IDEMPOTENCY_KEY_HEADER],
        body: () => readExpressBody(req),
        cancellation,
      },
      (context) => {
        (req as WithContext)[CONTEXT] = context as IdempotencyContext<TransactionOf<S>>;
        headerNames = res.getHeaderNames();
        const started = captureResponse(res);
        capture = started;
        next();
        return started.done;
      },
    ).then(
      (outcome) => {
        capture?.restore();
        switch (outcome.kind) {
          case 'unkeyed':
            (req as WithContext)[CONTEXT] = UNKEYED;
            next();
            return;
          case 'original':
            for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
            capture!.sendOriginal();
            return;
          case 'reply':
            if (capture) restoreHeaderNames(res, new Set(headerNames));
            writeReply(res, outcome.reply);
            return;
        }
      },
      (error: unknown) => {
        capture?.restore();
        if (res.closed && !res.writableFinished) return;
        if (capture) restoreHeaderNames(res, new Set(headerNames));
        next(error);
      },
    );
  };
}
