import type { ClientSession, Collection, MongoClient } from 'mongodb';
import type { IdempotencyDocument } from '../../src/index.js';

// Stand-ins for driver objects that answer from a script. They are not MongoDB and prove nothing about
// the server: they let unit tests feed the driver's real error objects into the store's error paths.

type Step = unknown | Error;
/** The collection methods the store calls, each answering from its own queue of results or errors. */
export type Script = Partial<
  Record<'findOneAndUpdate' | 'updateOne' | 'deleteOne' | 'findOne' | 'find' | 'deleteMany' | 'createIndex', Step[]>
>;

/** A collection whose methods pop the next step of their script: an Error is thrown, anything else returned. */
export function scriptedCollection(script: Script): { collection: Collection<IdempotencyDocument>; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const next = async (method: keyof Script) => {
    calls[method] = (calls[method] ?? 0) + 1;
    const queue = script[method] ?? [];
    if (queue.length === 0) throw new Error(`scripted collection: no step left for ${method}`);
    const step = queue.length === 1 ? queue[0] : queue.shift();
    if (step instanceof Error) throw step;
    return step;
  };
  const collection = {
    findOneAndUpdate: () => next('findOneAndUpdate'),
    updateOne: () => next('updateOne'),
    deleteOne: () => next('deleteOne'),
    findOne: () => next('findOne'),
    find: () => ({ toArray: () => next('find') }),
    deleteMany: () => next('deleteMany'),
    createIndex: () => next('createIndex'),
  };
  return { collection: collection as unknown as Collection<IdempotencyDocument>, calls };
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

/** A `findOneAndUpdate` that answers as MongoDB does to the claimant: `document` holding the token the claim wrote. */
export function claimantEcho(document: object) {
  return (async (_filter: unknown, update: ClaimPipeline) => ({
    ...document,
    token: update[0]!.$replaceWith.$let.in.$switch.branches[0]!.then.token.$literal,
  })) as never;
}
type ClaimPipeline = { $replaceWith: { $let: { in: { $switch: { branches: { then: { token: { $literal: string } } }[] } } } } }[];
