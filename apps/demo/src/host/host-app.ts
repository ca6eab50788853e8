import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerCheckoutRoutes } from '../checkout/checkout-routes.js';
import { packageRoot } from '../cli/package-root.js';
import type { StoreKind } from '../cli/service-config.js';
import { exchange } from '../scenarios/api-client.js';
import { SCENARIOS } from '../scenarios/catalog.js';
import { runScenario } from '../scenarios/run-scenario.js';
import type { ScenarioContext, ScenarioResult } from '../scenarios/scenario.js';
import { sendProblem } from '../service/problem.js';
import type { SupervisedService } from '../supervisor/service-process.js';
import { registerProxy } from './proxy.js';

/** The dashboard's static files, served from apps/demo/dashboard. */
const ASSETS: Readonly<Record<string, string>> = {
  '/': 'index.html',
  '/dashboard.js': 'dashboard.js',
  '/dashboard.css': 'dashboard.css',
};
const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** What the host serves from. */
export interface HostAppOptions {
  readonly service: SupervisedService;
  readonly scenarios: ScenarioContext;
  readonly store: StoreKind;
  readonly faults: boolean;
}

/**
 * The public face of `npm run demo`: the dashboard (`GET /`), its state feed, a button per scenario
 * (`POST /demo/scenarios/:id`), the checkout page (`GET /checkout`), and the payments API proxied to
 * the supervised service.
 */
export async function buildHostApp(options: HostAppOptions): Promise<FastifyInstance> {
  const { service } = options;
  const app = Fastify({ logger: false });
  const folder = join(packageRoot(), 'dashboard');
  const results = new Map<number, ScenarioResult>();
  let running: number | null = null;

  for (const [path, file] of Object.entries(ASSETS)) {
    app.get(path, async (_request, reply) => {
      const type = TYPES[file.split('.').pop()!]!;
      return reply.type(type).header('cache-control', 'no-store').send(await readFile(join(folder, file)));
    });
  }

  app.get('/demo/state', async (_request, reply) => {
    const state = service.state;
    let feed: unknown = null;
    if (state.kind === 'up') {
      const answer = await exchange(state.url, { method: 'GET', path: '/demo/feed?limit=40', timeoutMs: 2_000 });
      feed = answer.kind === 'answered' && answer.status === 200 ? answer.body : null;
    }
    return reply.header('cache-control', 'no-store').send({
      service: {
        state: state.kind,
        pid: state.kind === 'up' ? state.pid : null,
        restarts: service.restarts,
        store: options.store,
        faults_on_public_url: options.faults,
        last_exit: state.kind === 'down' ? (state.lastExit ?? null) : null,
      },
      feed,
      scenarios: SCENARIOS.map(({ id, title, expected, proves }) => ({ id, title, expected, proves, result: results.get(id) ?? null })),
      running,
    });
  });

  app.post<{ Params: { id: string } }>('/demo/scenarios/:id', async (request, reply) => {
    const scenario = SCENARIOS.find((candidate) => String(candidate.id) === request.params.id);
    if (!scenario) return reply.code(404).send({ detail: 'No such scenario: 1 to 8.' });
    // One at a time: scenarios kill and restart the one service.
    if (running !== null) return sendProblem(reply, 'scenario-running', 409, `Scenario ${running} is still running.`);
    running = scenario.id;
    try {
      const result = await runScenario(scenario, options.scenarios);
      results.set(scenario.id, result);
      return result;
    } finally {
      running = null;
    }
  });

  registerCheckoutRoutes(app);
  await registerProxy(app, { service, faults: options.faults });
  return app;
}
