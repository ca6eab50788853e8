import { type BackoffBounds, backoffFor, type StrategyName } from './backoff-strategies.js';
import { eventQueue } from './event-queue.js';
import { seededRandom } from './seeded-random.js';

/** Options of one run of {@link simulateOcc}. */
export interface OccOptions {
  readonly clients: number;
  readonly strategy: StrategyName;
  readonly seed: number;
  readonly bounds: BackoffBounds;
  /** One-way network delay: |normal(mean, sd)| ms per message (the article used 10 and 2). */
  readonly network: { readonly meanMs: number; readonly sdMs: number };
}

/** What one run cost. */
export interface OccRun {
  /** Write calls the server received (the article's "calls"). */
  readonly calls: number;
  /** Writes rejected for a stale version. */
  readonly failures: number;
  /** Simulated ms until the last client heard its write succeed. */
  readonly completionMs: number;
}

type Message =
  | { readonly kind: 'read'; readonly client: number }
  | { readonly kind: 'read-reply'; readonly client: number; readonly version: number }
  | { readonly kind: 'write'; readonly client: number; readonly version: number }
  | { readonly kind: 'write-reply'; readonly client: number; readonly ok: boolean };

/**
 * Marc Brooker's optimistic-concurrency experiment ("Exponential Backoff And Jitter", AWS
 * Architecture Blog, 2015) on a fake clock: every client reads one row's version, then writes it
 * back conditioned on that version; exactly one write per version succeeds; a loser backs off,
 * then reads again. Each client stops after its one successful write.
 */
export function simulateOcc(options: OccOptions): OccRun {
  const random = seededRandom(options.seed);
  const delay = () => Math.abs(random.normal(options.network.meanMs, options.network.sdMs));
  const queue = eventQueue<Message>();
  const attempts = new Array<number>(options.clients).fill(0);
  const backoffs = Array.from({ length: options.clients }, () => backoffFor(options.strategy, options.bounds, random));
  let version = 0;
  let calls = 0;
  let failures = 0;
  let now = 0;
  for (let client = 0; client < options.clients; client++) queue.push(delay(), { kind: 'read', client });
  for (let next = queue.pop(); next; next = queue.pop()) {
    now = next.time;
    const message = next.event;
    switch (message.kind) {
      case 'read':
        queue.push(now + delay(), { kind: 'read-reply', client: message.client, version });
        break;
      case 'read-reply':
        queue.push(now + delay(), { kind: 'write', client: message.client, version: message.version });
        break;
      case 'write': {
        calls++;
        const ok = message.version === version;
        if (ok) version++;
        else failures++;
        queue.push(now + delay(), { kind: 'write-reply', client: message.client, ok });
        break;
      }
      case 'write-reply':
        if (!message.ok) {
          const attempt = ++attempts[message.client]!;
          queue.push(now + delay() + backoffs[message.client]!(attempt), { kind: 'read', client: message.client });
        }
        break;
    }
  }
  return { calls, failures, completionMs: now };
}
