import type { ClaimedEvent } from '@oncely/core/adapter';
import fc from 'fast-check';
import type { ClientSession } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { type MongoOutbox, mongoOutbox } from '../../src/index.js';
import { at, freezeNow } from '../support/mingo.js';
import { mingoDb } from '../support/mingo-db.js';

// The MongoDB claim by aggregate as a model-based test (fast-check commands): the outbox's own code
// over a mingo-backed Db (not MongoDB; each command is atomic, so this proves the algorithm, not the
// server's concurrency), three relays and two aggregates. The properties are the PostgreSQL claim
// model's: first deliveries in sequence order per aggregate, no aggregate held by two relays at once,
// no event claimed at or behind a dead letter, nothing lost, and drained aggregates forgotten.

freezeNow();
const RELAYS = 3;
const AGGREGATES = ['a', 'b'];
const committed = { inTransaction: () => true } as unknown as ClientSession;

/** The outbox under test and what the relays and the broker have seen of it. */
class World {
  readonly mingo = mingoDb();
  readonly outbox: MongoOutbox = mongoOutbox({ db: this.mingo.db });
  /** What each relay holds from its last claim, until it settles it. */
  readonly held: ClaimedEvent[][] = Array.from({ length: RELAYS }, () => []);
  readonly enqueued: string[] = [];
  /** Per aggregate, the sequences in the order the broker first saw them. */
  readonly firstSeen = new Map<string, number[]>();
  private readonly seen = new Set<string>();

  deliver(batch: readonly ClaimedEvent[]): void {
    for (const event of batch.filter((e) => !this.seen.has(e.eventId))) {
      this.seen.add(event.eventId);
      this.firstSeen.set(event.aggregateId, [...(this.firstSeen.get(event.aggregateId) ?? []), event.aggregateSeq]);
    }
  }

  get delivered(): string[] {
    return [...this.seen];
  }

  /** The server clock passing `owner`'s leases, on its events and on its aggregates. */
  expire(owner: string): void {
    for (const document of this.mingo.documents('oncely_outbox')) if (document.leaseOwner === owner) document.leaseExpiresAt = at(-1);
    for (const document of this.mingo.documents('oncely_outbox_aggregates')) if (document.leaseOwner === owner) document.claimableAt = at(-1);
  }

  deadLetters(): string[] {
    return this.mingo
      .documents('oncely_outbox')
      .filter((document) => document.deadLetteredAt !== null && document.publishedAt === null)
      .map((document) => String(document._id));
  }
}

const ownerOf = (relay: number) => `relay-${relay}`;
type Command = fc.AsyncCommand<World, World>;

const enqueue = (aggregate: number): Command => ({
  check: () => true,
  async run(_, world) {
    const event = await world.outbox.enqueue(committed, { aggregateType: 't', aggregateId: AGGREGATES[aggregate]!, eventType: 'e', payload: {} });
    world.enqueued.push(event.eventId);
  },
  toString: () => `enqueue(${AGGREGATES[aggregate]})`,
});

const claim = (relay: number, limit: number): Command => ({
  check: (world) => world.held[relay]!.length === 0,
  async run(_, world) {
    const batch = await world.outbox.source.claim({ owner: ownerOf(relay), limit, leaseMs: 600_000 });
    expect(batch.length).toBeLessThanOrEqual(limit);
    const elsewhere = new Set(world.held.filter((_, r) => r !== relay).flatMap((events) => events.map((e) => e.aggregateId)));
    expect(batch.filter((event) => elsewhere.has(event.aggregateId)), 'aggregates another relay holds').toEqual([]);
    for (const aggregateId of AGGREGATES) {
      const seqs = batch.filter((event) => event.aggregateId === aggregateId).map((event) => event.aggregateSeq);
      expect(seqs, `${aggregateId} in sequence order`).toEqual([...seqs].sort((x, y) => x - y));
    }
    // A dead letter is never claimed, and nothing of its aggregate after it is.
    const parked = world.mingo.documents('oncely_outbox').filter((document) => document.deadLetteredAt !== null && document.publishedAt === null);
    const heldBack = batch.filter((event) => parked.some((d) => d.aggregateId === event.aggregateId && (d.aggregateSeq as number) <= event.aggregateSeq));
    expect(heldBack, 'events at or behind a dead letter').toEqual([]);
    world.held[relay] = [...batch];
  },
  toString: () => `claim(relay ${relay}, limit ${limit})`,
});

/** How a relay ends a batch: the broker took it, refused its heads, or the relay died. */
type Ending = 'publish' | 'retry' | 'dead-letter' | 'crash' | 'crash-after-publish';

const settle = (relay: number, ending: Ending): Command => ({
  check: (world) => world.held[relay]!.length > 0,
  async run(_, world) {
    const batch = world.held[relay]!;
    world.held[relay] = [];
    const owner = ownerOf(relay);
    // After a refusal the relay settles each aggregate's first event and hands back the rest.
    const heads = batch.filter((event, i) => batch.findIndex((other) => other.aggregateId === event.aggregateId) === i);
    const rest = batch.filter((event) => !heads.includes(event)).map((event) => event.eventId);
    if (ending === 'publish' || ending === 'crash-after-publish') world.deliver(batch);
    if (ending === 'publish') await world.outbox.source.markPublished(batch.map((event) => event.eventId));
    if (ending === 'retry') await world.outbox.source.reschedule({ owner, retries: heads.map((e) => ({ eventId: e.eventId, delayMs: 0, error: 'x' })) });
    if (ending === 'dead-letter') await world.outbox.source.deadLetter({ owner, letters: heads.map((e) => ({ eventId: e.eventId, error: 'x' })) });
    if (ending === 'retry' || ending === 'dead-letter') await world.outbox.source.release({ owner, eventIds: rest });
    if (ending === 'crash' || ending === 'crash-after-publish') world.expire(owner);
  },
  toString: () => `${ending}(relay ${relay})`,
});

const requeue = (): Command => ({
  check: () => true,
  run: async (_, world) => void (await world.outbox.requeue(world.deadLetters())),
  toString: () => 'requeue',
});

const relay = fc.integer({ min: 0, max: RELAYS - 1 });
const commands = fc.commands(
  [
    fc.integer({ min: 0, max: AGGREGATES.length - 1 }).map(enqueue),
    fc.tuple(relay, fc.integer({ min: 1, max: 4 })).map(([r, limit]) => claim(r, limit)),
    fc.tuple(relay, fc.constantFrom<Ending>('publish', 'publish', 'retry', 'dead-letter', 'crash', 'crash-after-publish')).map(([r, ending]) => settle(r, ending)),
    fc.constant(null).map(requeue),
  ],
  { maxCommands: 40 },
);

/** Runs `steps`, then every relay dies, dead letters are requeued and one relay drains: nothing lost, order kept. */
async function modelRun(steps: Iterable<Command>): Promise<void> {
  const world = new World();
  await world.outbox.ensureIndexes();
  await fc.asyncModelRun(() => ({ model: world, real: world }), steps);
  for (let r = 0; r < RELAYS; r++) world.expire(ownerOf(r));
  await world.outbox.requeue(world.deadLetters());
  for (let round = 0; round <= world.enqueued.length; round++) {
    const batch = await world.outbox.source.claim({ owner: 'drain', limit: 10, leaseMs: 600_000 });
    if (batch.length === 0) break;
    world.deliver(batch);
    await world.outbox.source.markPublished(batch.map((event) => event.eventId));
  }
  expect(world.delivered.sort(), 'every enqueued event delivered').toEqual([...world.enqueued].sort());
  for (const [aggregateId, seqs] of world.firstSeen) expect(seqs, `${aggregateId} first seen in order`).toEqual(seqs.map((_, i) => i + 1));
  expect(await world.outbox.source.claim({ owner: 'drain', limit: 10, leaseMs: 600_000 })).toEqual([]);
  expect(world.mingo.documents('oncely_outbox_aggregates'), 'drained aggregates forgotten').toEqual([]);
}

describe('the MongoDB claim by aggregate as a model (mingo, not MongoDB), three relays', () => {
  it('a dead letter holds its aggregate back: the next event waits for the requeue', () =>
    modelRun([enqueue(0), enqueue(0), claim(0, 1), settle(0, 'dead-letter'), claim(1, 4), settle(1, 'publish')]));

  it('under random commands: first deliveries in sequence order per aggregate, no aggregate held by two relays, nothing lost (property)', async () => {
    await fc.assert(fc.asyncProperty(commands, modelRun), { numRuns: 150 });
  }, 120_000);
});
