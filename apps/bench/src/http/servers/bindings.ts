import type { ServeBinding } from './bench-server.js';
import { serveExpress } from './express-server.js';
import { serveFastify } from './fastify-server.js';
import { serveFetch } from './fetch-server.js';
import { serveHono } from './hono-server.js';

/** Every HTTP binding the bench measures, by the name its suite carries (`http-<name>`). */
export const BENCH_BINDINGS = {
  fetch: serveFetch,
  express: serveExpress,
  fastify: serveFastify,
  hono: serveHono,
} as const satisfies Record<string, ServeBinding>;

/** One of {@link BENCH_BINDINGS}. */
export type BindingName = keyof typeof BENCH_BINDINGS;
