import { postgresOutbox, sqlDriver } from '@oncely/postgres';
import pg from 'pg';
import { preciseNow } from '../harness/precise-clock.js';

/** What the pipeline asks of its producer process. */
export interface ProducerJob {
  readonly databaseUrl: string;
  readonly schema: string;
  readonly events: number;
  readonly aggregates: number;
  readonly producers: number;
  readonly ratePerSec?: number;
  /** Epoch ms (with a fraction) the pacing counts from. */
  readonly startedAt: number;
}

/** One event's moments in the producer: id, created (database clock), enqueue resolved, commit resolved. */
export type ProducerStamp = readonly [eventId: string, created: number, enqueued: number, committed: number];

/** Messages the producer process sends its parent. */
export type ProducerMessage = { readonly ready: true } | { readonly stamps: readonly ProducerStamp[] } | { readonly done: true } | { readonly error: string };

/** The application's side: `producers` concurrent transactions, each enqueueing one event, paced to `ratePerSec`. */
export async function produce(job: ProducerJob, pool: pg.Pool, onStamp: (stamp: ProducerStamp) => void): Promise<void> {
  const outbox = postgresOutbox({ db: pool, schema: job.schema });
  const driver = sqlDriver(pool);
  let next = 0;
  await Promise.all(
    Array.from({ length: job.producers }, async () => {
      while (next < job.events) {
        const n = next++;
        const wait = job.ratePerSec === undefined ? 0 : job.startedAt + (n * 1_000) / job.ratePerSec - preciseNow();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        let enqueuedAt = 0;
        const event = await driver.transaction(async (tx) => {
          const enqueued = await outbox.enqueue(tx, {
            aggregateType: 'order',
            aggregateId: `ord_${n % job.aggregates}`,
            eventType: 'order.updated.v1',
            payload: { n },
          });
          enqueuedAt = preciseNow();
          return { action: 'commit', value: enqueued };
        });
        onStamp([event.eventId, event.createdAt.getTime(), enqueuedAt, preciseNow()]);
      }
    }),
  );
}

// Run as a child process: the producers are the application, on their own event loop as app servers are.
if (process.send && process.env.ONCELY_BENCH_PRODUCER === '1') {
  const send = (message: ProducerMessage) => process.send!(message);
  process.once('message', async (job: ProducerJob) => {
    const pool = new pg.Pool({ connectionString: job.databaseUrl, max: job.producers });
    // An idle connection the server dropped fails the run in the parent instead of crashing this process.
    pool.on('error', (error) => send({ error: `an idle connection failed: ${error.message}` }));
    let pending: ProducerStamp[] = [];
    const flush = () => {
      if (pending.length > 0) send({ stamps: pending });
      pending = [];
    };
    const timer = setInterval(flush, 10);
    try {
      await produce(job, pool, (stamp) => pending.push(stamp));
      flush();
      send({ done: true });
    } catch (error) {
      send({ error: String((error as Error)?.stack ?? error) });
    } finally {
      clearInterval(timer);
      await pool.end();
      process.disconnect();
    }
  });
  send({ ready: true });
}
