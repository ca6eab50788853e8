import type { ClientSession, Collection, MongoClient } from 'mongodb';
import type { IdempotencyDocument } from '../../src/index.js';

// Stand-ins for driver objects that answer from a script. They are not MongoDB and prove nothing about
// the server: they let unit tests feed the driver's real error objects into the store's error paths and
// see the options the store hands the driver.

type Step = unknown | Error;
type Method = 'findOneAndUpdate' | 'updateOne' | 'deleteOne' | 'findOne' | 'find' | 'deleteMany' | 'createIndex' | 'hello' | 'listCollections';
/**
 * The driver methods the store calls, each answering from its own queue of results or errors.
 * `hello` (the database's `command({ hello: 1 })`) answers a replica set and `listCollections` no
 * collection unless scripted.
 */
export type Script = Partial<Record<Method, Step[]>>;
/** One call the store made, with every argument it passed (the driver options last). */
export interface Call {
  readonly method: Method;
  readonly args: readonly unknown[];
}

/** A collection whose methods pop the next step of their script: an Error is thrown, anything else returned. */
export function scriptedCollection(script: Script): {
  collection: Collection<IdempotencyDocument>;
  calls: Record<string, number>;
  log: Call[];
} {
  const calls: Record<string, number> = {};
  const log: Call[] = [];
  const defaults: Script = { hello: [{ setName: 'rs0' }], listCollections: [[]] };
  const next = async (method: Method, args: unknown[]) => {
    calls[method] = (calls[method] ?? 0) + 1;
    log.push({ method, args });
    const queue = script[method] ?? defaults[method] ?? [];
    if (queue.length === 0) throw new Error(`scripted collection: no step left for ${method}`);
    const step = queue.length === 1 ? queue[0] : queue.shift();
    if (step instanceof Error) throw step;
    return step;
  };
  const method =
    (name: Method) =>
    (...args: unknown[]) =>
      next(name, args);
  const cursor =
    (name: Method) =>
    (...args: unknown[]) => ({ toArray: () => next(name, args) });
  const collection = {
    collectionName: 'oncely_idempotency',
    namespace: 'app.oncely_idempotency',
    db: { command: method('hello'), listCollections: cursor('listCollections') },
    findOneAndUpdate: method('findOneAndUpdate'),
    updateOne: method('updateOne'),
    deleteOne: method('deleteOne'),
    findOne: method('findOne'),
    find: cursor('find'),
    deleteMany: method('deleteMany'),
    createIndex: method('createIndex'),
  };
  return { collection: collection as unknown as Collection<IdempotencyDocument>, calls, log };
}

/** What a scripted session did. */
export interface SessionLog {
  started: number;
  aborted: number;
  commits: number;
  ended: number;
}

/** A client whose `hello` answers `hello` and whose sessions log transactions, committing from `commits`. */
export function scriptedClient(hello: object, commits: Step[] = [undefined]): { client: MongoClient; log: SessionLog } {
  const log: SessionLog = { started: 0, aborted: 0, commits: 0, ended: 0 };
  let open = false;
  const session = {
    startTransaction: () => {
      log.started++;
      open = true;
    },
    inTransaction: () => open,
    abortTransaction: async () => {
      log.aborted++;
      open = false;
    },
    commitTransaction: async () => {
      log.commits++;
      const step = commits.length === 1 ? commits[0] : commits.shift();
      if (step instanceof Error) throw step;
      open = false;
    },
    endSession: async () => {
      log.ended++;
    },
  };
  const client = {
    db: () => ({ command: async () => hello }),
    startSession: () => session as unknown as ClientSession,
  };
  return { client: client as unknown as MongoClient, log };
}

type ClaimPipeline = { $replaceWith: { $let: { in: { $switch: { branches: { then: { token: { $literal: string } } }[] } } } } }[];

/** The lease token a claim command writes (it sits in the pipeline's `fresh` branch). */
export const claimToken = (update: unknown): string => (update as ClaimPipeline)[0]!.$replaceWith.$let.in.$switch.branches[0]!.then.token.$literal;

/**
 * A `findOneAndUpdate` that answers as MongoDB does to the claimant: `document` holding the token the
 * claim wrote. Given a log, it records each call there too.
 */
export function claimantEcho(document: object, log?: Call[]) {
  return (async (...args: unknown[]) => {
    log?.push({ method: 'findOneAndUpdate', args });
    return { ...document, token: claimToken(args[1]) };
  }) as never;
}
