import type { OutboxSource } from '@oncely/core/outbox';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../database/database.js';
import { BROKER_COUNTS, RECENT_ACCOUNTS } from '../database/sql.js';
import type { Counters } from './counters.js';
import type { Timeline } from './timeline.js';

/** What the stats and feed routes read. */
export interface StatsRouteOptions {
  readonly database: Database;
  readonly outbox: OutboxSource;
  readonly counters: Counters;
  readonly timeline: Timeline;
  readonly store: string;
  readonly startedAt: Date;
}

/**
 * `GET /v1/stats`: the counters since this process started, plus the outbox gauge read from the
 * database. `GET /demo/feed`: what the dashboard polls (stats, recent requests, balances).
 */
export function registerStatsRoutes(app: FastifyInstance, options: StatsRouteOptions): void {
  const { database, outbox, counters, timeline } = options;

  async function stats() {
    const gauges = await outbox.stats();
    return {
      ...counters.values,
      outbox_unpublished: gauges.unpublished,
      started_at: options.startedAt.toISOString(),
      pid: process.pid,
      store: options.store,
    };
  }

  app.get('/v1/stats', async (_request, reply) => reply.header('cache-control', 'no-store').send(await stats()));

  app.get<{ Querystring: { limit?: string } }>('/demo/feed', async (request, reply) => {
    const limit = Math.max(1, Math.min(Number(request.query.limit ?? 40) || 40, 500));
    const [current, accounts, broker] = await Promise.all([
      stats(),
      database.query(RECENT_ACCOUNTS, [15]),
      database.query<{ delivered: number; unacked: number }>(BROKER_COUNTS),
    ]);
    return reply.header('cache-control', 'no-store').send({
      stats: current,
      broker: broker.rows[0],
      accounts: accounts.rows,
      timeline: timeline.recent(limit),
    });
  });
}
