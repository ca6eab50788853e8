import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { packageRoot } from '../cli/package-root.js';
import { sendProblem } from '../service/problem.js';

/** The checkout's files: the page and its stylesheet from apps/demo/checkout, the script as built. */
const FILES: Readonly<Record<string, { readonly path: readonly string[]; readonly type: string }>> = {
  '/checkout': { path: ['checkout', 'index.html'], type: 'text/html; charset=utf-8' },
  '/checkout.css': { path: ['checkout', 'checkout.css'], type: 'text/css; charset=utf-8' },
  // Bundled by tsup from src/checkout/checkout-page.ts with @oncely/http/browser inside.
  '/checkout.js': { path: ['dist', 'checkout.js'], type: 'text/javascript; charset=utf-8' },
};

/** `GET /checkout`: a cart paid through `@oncely/http/browser`, against the payments API on the same URL. */
export function registerCheckoutRoutes(app: FastifyInstance): void {
  const root = packageRoot();
  for (const [route, file] of Object.entries(FILES)) {
    app.get(route, async (_request, reply) => {
      const body = await readFile(join(root, ...file.path)).catch(() => undefined);
      if (!body) return sendProblem(reply, 'checkout-not-built', 503, 'The checkout script is not built: run npm run build -w @oncely/demo.');
      return reply.type(file.type).header('cache-control', 'no-store').send(body);
    });
  }
}
