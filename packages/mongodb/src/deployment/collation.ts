import { OncelyError } from '@oncely/core';
import type { Collection, Document } from 'mongodb';

/**
 * Throws `invalid_option` when the collection's default collation is not `simple`. Its `_id` index
 * would compare by that collation, so `_id`s that differ only in case or accents (the scopes of
 * tenants `acme` and `ACME`) would be one record, and one tenant would replay another's response.
 * A collection that does not exist yet passes: the first write creates it with the simple collation.
 * One `listCollections`; driver errors pass unchanged.
 */
export async function assertSimpleCollation(collection: Pick<Collection, 'db' | 'collectionName' | 'namespace'>): Promise<void> {
  const [info] = await collection.db.listCollections({ name: collection.collectionName }, { nameOnly: false }).toArray();
  const collation = (info as { options?: { collation?: Document } } | undefined)?.options?.collation;
  if (collation === undefined || collation.locale === 'simple') return;
  throw new OncelyError(
    'invalid_option',
    `oncely/mongodb: the collection ${collection.namespace} has the default collation ${JSON.stringify(collation)}, ` +
      'so its _id index treats ids that differ only in case or accents as equal and would merge scopes (tenant "acme" ' +
      'would replay "ACME"\'s responses). Give oncely a collection created without a collation (or with { locale: "simple" }).',
  );
}
