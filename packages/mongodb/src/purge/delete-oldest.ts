import type { Collection, Document, Filter } from 'mongodb';

/**
 * Deletes at most `limit` documents matching `filter`, oldest by `field` first: their ids through the
 * index on `field`, then one `deleteMany` that checks the filter again (a document changed in between
 * is kept). Returns how many it deleted. What every bounded purge of the adapter does.
 */
export async function deleteOldest<T extends Document & { _id: string }>(
  collection: Collection<T>,
  filter: Filter<T>,
  field: string,
  limit: number,
): Promise<number> {
  const oldest = await collection.find(filter, { projection: { _id: 1 }, sort: { [field]: 1 }, limit }).toArray();
  if (oldest.length === 0) return 0;
  const result = await collection.deleteMany({ ...filter, _id: { $in: oldest.map((document) => document._id) } } as Filter<T>);
  return result.deletedCount;
}
