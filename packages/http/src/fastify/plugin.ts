import { type IdempotencyStore, OncelyError } from '@oncely/core';
import type {
  FastifyError,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import { bodyRefusalReply } from '../contract/body-errors.js';
import { type CapturedResponse, isEventStream, normalizeHeaders } from '../contract/captured-response.js';
import { type ExchangeOutcome, handleExchange } from '../contract/handle-exchange.js';
import { IDEMPOTENCY_KEY_HEADER } from '../contract/idempotency-key-header.js';
import {
  type ContractConfig,
  type IdempotencyContext,
  type IdempotencyHttpOptions,
  resolveOptions,
} from '../contract/options.js';
import { frameworkBody } from '../contract/parsed-body.js';
import { problemReply } from '../contract/problem.js';
import type { HttpReply } from '../contract/http-reply.js';
import { CloseSignal } from '../node/close-signal.js';
import { payloadBytes } from './payload-bytes.js';
import { restoreHeaderNames, sendReply, toBuffer } from './send-reply.js';

/** Plugin-wide defaults: the engine and scope, plus any option a route may override. */
export type FastifyIdempotencyOptions<S extends IdempotencyStore = IdempotencyStore> = Omit<
  IdempotencyHttpOptions<FastifyRequest, S>,
  'operation'
> & { readonly operation?: IdempotencyHttpOptions<FastifyRequest, S>['operation'] };

/** Per-route config (`config: { idempotency: { operation: 'payments.create.v1' } }`); overrides the plugin's. */
export type FastifyRouteIdempotency = Partial<IdempotencyHttpOptions<FastifyRequest>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Makes the route idempotent under `@oncely/http/fastify`. */
    idempotency?: FastifyRouteIdempotency;
  }
}

/**
 * One request's exchange, from its preHandler to its onSend, kept on the request under a symbol:
 * one object per request instead of entries in two WeakMaps.
 */
class FastifyExchange {
  /** Set once the claim is decided: the handler's context, or `unkeyed`. */
  context: IdempotencyContext | undefined;
  /** Hands the handler's response to the contract; set at the claim, cleared by the onSend that uses it. */
  deliver: ((captured: CapturedResponse) => void) | undefined;
  /** Header names the reply had before the handler ran (a problem sent after it removes the handler's). */
  headerNames: readonly string[] = [];
  outcome!: Promise<ExchangeOutcome>;
}

const EXCHANGE = Symbol('oncely.fastifyExchange');
type WithExchange = FastifyRequest & { [EXCHANGE]?: FastifyExchange };

const exchangeOf = (request: FastifyRequest): FastifyExchange | undefined => (request as WithExchange)[EXCHANGE];

/** The idempotency context of a request on an idempotent route (with `tx` in `transaction` mode). */
export function fastifyIdempotencyContext<Tx = unknown>(request: FastifyRequest): IdempotencyContext<Tx> {
  const context = exchangeOf(request)?.context;
  if (!context) throw new OncelyError('invalid_state', 'oncely/http: this route has no idempotency config');
  return context as IdempotencyContext<Tx>;
}

function preHandlerFor(config: ContractConfig<FastifyRequest>): preHandlerAsyncHookHandler {
  // Not an async frame: one promise per request, settled by the claim or by an outcome that comes first.
  return function idempotencyPreHandler(request: FastifyRequest, reply: FastifyReply) {
    const exchange = new FastifyExchange();
    (request as WithExchange)[EXCHANGE] = exchange;
    return new Promise<FastifyReply | undefined>((resolve, reject) => {
      exchange.outcome = handleExchange(
        config,
        {
          request,
          method: request.method,
          url: request.url,
          idempotencyKey: request.headers[IDEMPOTENCY_KEY_HEADER],
          // Fastify parses a body or refuses it itself (415), and ignores one on GET and HEAD: what it left is the body.
          body: () => frameworkBody(request.body, request.headers['content-type'], false),
          cancellation: new CloseSignal(reply.raw),
        },
        (context) => {
          exchange.context = context;
          exchange.headerNames = Object.keys(reply.getHeaders());
          // Resolved by onSend. A client that goes away does not end the wait: the handler runs on and its
          // outcome is stored, so the client's retry replays it instead of running the operation again.
          const captured = new Promise<CapturedResponse>((deliver) => {
            exchange.deliver = deliver;
          });
          // The route handler runs now; onSend hands its response over and waits for the outcome.
          resolve(undefined);
          return captured;
        },
      );
      exchange.outcome.then(
        (first) => {
          if (exchange.context) return;
          if (first.kind === 'unkeyed') {
            exchange.context = { kind: 'unkeyed' };
            resolve(undefined);
          } else if (first.kind === 'reply') resolve(sendReply(reply, first.reply));
          else resolve(undefined);
        },
        // After the claim the error is onSend's to raise.
        (error: unknown) => {
          if (!exchange.context) reject(error);
        },
      );
    });
  } as preHandlerAsyncHookHandler;
}

const onSend: onSendAsyncHookHandler<unknown> = async (request, reply, payload) => {
  const state = exchangeOf(request);
  const deliver = state?.deliver;
  if (!deliver) return payload;
  state.deliver = undefined;
  const status = reply.statusCode;
  const headers = normalizeHeaders(reply.getHeaders());
  let body: Uint8Array | undefined;
  if (isEventStream(reply.getHeader('content-type'))) {
    (payload as { destroy?: () => void } | null)?.destroy?.();
    deliver({ kind: 'streaming', status, headers });
  } else if (typeof payload === 'string') {
    // Serialized JSON, usually: stored as the text it is, never turned into bytes and back.
    deliver({ kind: 'complete', status, headers, body: payload });
  } else {
    const bytes = payloadBytes(payload);
    body = bytes instanceof Promise ? await bytes : bytes;
    deliver({ kind: 'complete', status, headers, body });
  }
  const outcome = await state.outcome;
  if (outcome.kind === 'reply') {
    restoreHeaderNames(reply, new Set(state.headerNames));
    reply.code(outcome.reply.status).headers(outcome.reply.headers);
    return outcome.reply.body === undefined ? null : toBuffer(outcome.reply.body);
  }
  if (outcome.kind === 'original') reply.headers(outcome.headers);
  // A string or Buffer goes on as it came (Node writes a string with the headers in one call); a stream was read whole.
  return typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : toBuffer(body ?? new Uint8Array());
};

/**
 * The Fastify plugin: routes with `config.idempotency` get the Idempotency-Key contract (plugin
 * options are the defaults, the route's config overrides them). Register it, awaited, before the
 * routes; it does not encapsulate, so it sees the routes of the instance it is registered on.
 *
 * ```ts
 * await app.register(fastifyIdempotency, { engine, scope: (request) => request.user });
 * app.post('/payments', { config: { idempotency: { operation: 'payments.create.v1' } } }, createPayment);
 * ```
 */
export const fastifyIdempotency: FastifyPluginCallback<FastifyIdempotencyOptions> = Object.assign(
  (fastify: Parameters<FastifyPluginCallback>[0], options: FastifyIdempotencyOptions, done: (error?: Error) => void) => {
    fastify.addHook('onRoute', (route) => {
      const routeOptions = route.config?.idempotency;
      if (!routeOptions) return;
      const config = resolveOptions({ ...options, ...routeOptions } as IdempotencyHttpOptions<FastifyRequest>);
      route.preHandler = [...hooks(route.preHandler), preHandlerFor(config)] as typeof route.preHandler;
      route.onSend = [...hooks(route.onSend), onSend] as typeof route.onSend;
      route.errorHandler = errorHandlerFor(config, route.errorHandler as RouteErrorHandler | undefined) as typeof route.errorHandler;
    });
    done();
  },
  // What fastify-plugin sets: hooks apply to the registering instance, not to a child context.
  { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: '@oncely/http/fastify' },
);

/**
 * The problem for an error Fastify raised before the route's idempotency ran: its body parser
 * (malformed JSON, an unknown content type, a body over `bodyLimit`) or its schema validation.
 * Anything else (an onRequest hook's 401, a handler's error) is not the contract's to answer.
 */
function refusalBeforeClaim(config: ContractConfig<FastifyRequest>, error: FastifyError): HttpReply | undefined {
  if (typeof error.code === 'string' && error.code.startsWith('FST_ERR_CTP_')) {
    const refusal = error.statusCode === 413 ? 'too-large' : error.statusCode === 415 ? 'unsupported' : 'malformed';
    return bodyRefusalReply(refusal, config.profile, `${error.message}.`);
  }
  if (Array.isArray(error.validation)) {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
    return problemReply('invalid-request', config.profile, error.message, { status, members: { errors: error.validation } });
  }
  return undefined;
}

type RouteErrorHandler = (this: unknown, error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown;

/** The route's error handler: refusals before the claim become problems, the rest go where they went. */
function errorHandlerFor(config: ContractConfig<FastifyRequest>, previous: RouteErrorHandler | undefined): RouteErrorHandler {
  return function idempotencyErrorHandler(this: unknown, error, request, reply) {
    const refusal = exchangeOf(request)?.context ? undefined : refusalBeforeClaim(config, error);
    if (refusal) return sendReply(reply, refusal);
    if (previous) return previous.call(this, error, request, reply);
    // Thrown from a route's error handler, the error goes on to the instance's.
    throw error;
  };
}

function hooks<T>(value: T | readonly T[] | undefined): readonly T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value as T];
}
