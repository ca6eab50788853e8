import type { Db } from 'mongodb';
import { Aggregator, Query, update as applyModifier } from 'mingo';

// A `Db` whose collections keep documents in arrays and evaluate every filter, sort and update
// (operators and pipelines) with mingo. It is NOT MongoDB: no transactions, no concurrency, no
// indexes (only `_id` is unique), and natural order runs newest first. Model tests run the outbox's real code over it to prove the logic
// of the commands it builds, one call at a time; the server's behaviour is for the real-server suites.

type Doc = Record<string, unknown> & { _id?: unknown };
interface FindOptions {
  readonly sort?: Record<string, 1 | -1>;
  readonly limit?: number;
  readonly upsert?: boolean;
  readonly returnDocument?: 'before' | 'after';
}

/** A duplicate `_id`, shaped like the driver's E11000 so the adapter's classifier reads it. */
class DuplicateKey extends Error {
  readonly code = 11000;
  readonly keyPattern = { _id: 1 };
  constructor(id: unknown) {
    super(`E11000 duplicate key error collection: mingo index: _id_ dup key: { _id: ${JSON.stringify(id)} }`);
    this.name = 'MongoServerError';
  }
}

const copy = <T>(value: T): T => structuredClone(value);

/** The fields an upsert's insert starts from: the filter's plain equalities. */
function seedOf(filter: Doc): Doc {
  return Object.fromEntries(
    Object.entries(filter).filter(([key, value]) => !key.startsWith('$') && !(typeof value === 'object' && value !== null && !(value instanceof Date))),
  );
}

function updated(document: Doc, update: unknown, inserting: boolean): Doc {
  if (Array.isArray(update)) return new Aggregator(update as never).run([copy(document)] as never)[0] as Doc;
  const { $setOnInsert, ...modifier } = update as Record<string, Record<string, unknown> | undefined>;
  const next = copy(document);
  if (inserting && $setOnInsert) Object.assign(next, copy($setOnInsert));
  if (Object.keys(modifier).length > 0) applyModifier(next, modifier as never);
  return next;
}

/** Runs before every command, so a test can interleave another caller's whole call there. */
export type BeforeCommand = (collection: string, method: string) => Promise<void> | void;

/** One collection: documents in insertion order. */
function mingoCollection(name: string, documents: Doc[], before: BeforeCommand) {
  const matching = (filter: Doc, options: FindOptions = {}) => {
    // Natural order is no promise: matches start newest first, so only a sort's keys decide ties.
    let cursor = new Query(filter as never).find([...documents].reverse() as never);
    if (options.sort) cursor = cursor.sort(options.sort as never);
    const found = cursor.all() as Doc[];
    return options.limit ? found.slice(0, options.limit) : found;
  };
  const insert = (document: Doc) => {
    if (documents.some((existing) => existing._id === document._id)) throw new DuplicateKey(document._id);
    documents.push(document);
  };
  /** Updates the first match (or inserts from the filter): the stored document before and after. */
  const updateFirst = (filter: Doc, update: unknown, options: FindOptions) => {
    const [found] = matching(filter, { ...options, limit: 1 });
    if (found) {
      const next = updated(found, update, false);
      documents[documents.indexOf(found)] = next;
      return { before: copy(found), after: copy(next), matched: 1, upserted: 0 };
    }
    if (!options.upsert) return { before: null, after: null, matched: 0, upserted: 0 };
    const next = updated(seedOf(filter), update, true);
    insert(next);
    return { before: null, after: copy(next), matched: 0, upserted: 1 };
  };
  const updateAll = (filter: Doc, update: unknown) => {
    const found = matching(filter);
    for (const document of found) documents[documents.indexOf(document)] = updated(document, update, false);
    return { matchedCount: found.length, modifiedCount: found.length };
  };
  const remove = (filter: Doc, limit?: number) => {
    const found = matching(filter, limit ? { limit } : {});
    for (const document of found) documents.splice(documents.indexOf(document), 1);
    return { deletedCount: found.length };
  };
  const indexes: { key: object; options: object }[] = [];
  const command =
    <A extends unknown[], R>(method: string, body: (...args: A) => R) =>
    async (...args: A): Promise<R> => {
      await before(name, method);
      return body(...args);
    };
  return {
    collectionName: name,
    indexes,
    findOne: command('findOne', (filter: Doc) => copy(matching(filter, { limit: 1 })[0] ?? null)),
    find: (filter: Doc, options: FindOptions = {}) => ({ toArray: command('find', () => copy(matching(filter, options))) }),
    aggregate: (pipeline: object[]) => ({ toArray: command('aggregate', () => copy(new Aggregator(pipeline as never).run(documents as never) as Doc[])) }),
    insertOne: command('insertOne', (document: Doc) => {
      insert(copy(document));
      return { insertedId: document._id };
    }),
    findOneAndUpdate: command('findOneAndUpdate', (filter: Doc, update: unknown, options: FindOptions = {}) => {
      const result = updateFirst(filter, update, options);
      return options.returnDocument === 'after' ? result.after : result.before;
    }),
    updateOne: command('updateOne', (filter: Doc, update: unknown, options: FindOptions = {}) => {
      const { matched, upserted } = updateFirst(filter, update, options);
      return { matchedCount: matched, modifiedCount: matched, upsertedCount: upserted };
    }),
    updateMany: command('updateMany', (filter: Doc, update: unknown) => updateAll(filter, update)),
    deleteOne: command('deleteOne', (filter: Doc) => remove(filter, 1)),
    deleteMany: command('deleteMany', (filter: Doc) => remove(filter)),
    bulkWrite: command('bulkWrite', (operations: { updateOne?: { filter: Doc; update: unknown; upsert?: boolean } }[]) => {
      let matchedCount = 0;
      let upsertedCount = 0;
      for (const operation of operations) {
        if (!operation.updateOne) throw new Error('mingo db: only updateOne in bulkWrite');
        const { filter, update, upsert } = operation.updateOne;
        const result = updateFirst(filter, update, { upsert: upsert ?? false });
        matchedCount += result.matched;
        upsertedCount += result.upserted;
      }
      return { matchedCount, modifiedCount: matchedCount, upsertedCount };
    }),
    createIndex: command('createIndex', (key: object, options: object) => {
      indexes.push({ key, options });
      return (options as { name?: string }).name ?? 'index';
    }),
  };
}

/** A mingo-backed `Db`, and the live documents of each collection for assertions and time travel. */
export function mingoDb(before: BeforeCommand = () => undefined): { db: Db; documents(name: string): Doc[]; collection(name: string): ReturnType<typeof mingoCollection> } {
  const stores = new Map<string, Doc[]>();
  const collections = new Map<string, ReturnType<typeof mingoCollection>>();
  const collection = (name: string) => {
    let found = collections.get(name);
    if (!found) {
      stores.set(name, []);
      found = mingoCollection(name, stores.get(name)!, before);
      collections.set(name, found);
    }
    return found;
  };
  return {
    db: { collection } as unknown as Db,
    documents: (name) => {
      collection(name);
      return stores.get(name)!;
    },
    collection,
  };
}
