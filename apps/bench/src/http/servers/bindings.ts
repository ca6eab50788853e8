import type { BuildBinding } from './bench-server.js';
import { buildExpress } from './express-server.js';
import { buildFastify } from './fastify-server.js';
import { buildFetch } from './fetch-server.js';
import { buildHono } from './hono-server.js';

/** Every HTTP binding the bench measures, by the name its suite carries (`http-<name>`). */
export const BENCH_BINDINGS = {
  fetch: buildFetch,
  express: buildExpress,
  fastify: buildFastify,
  hono: buildHono,
} as const satisfies Record<string, BuildBinding>;

/** One of {@link BENCH_BINDINGS}. */
export type BindingName = keyof typeof BENCH_BINDINGS;
