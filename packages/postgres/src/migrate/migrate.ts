import { toStorageError } from '@oncely/core/adapter';
import type { PostgresDb } from '../driver/postgres-db.js';
import { sqlDriver } from '../driver/sql-driver.js';
import { quoteIdentifier } from '../identifiers/identifier.js';
import { migrationStatements } from '../sql/statements.js';
import { type MigrateOptions, migrations } from './migrations.js';

/**
 * Applies every shipped migration in name order, in one transaction, under an advisory lock so
 * concurrent callers (several instances starting at once) take turns. Every file is idempotent, so
 * running it again changes nothing. Returns the names of the files applied.
 */
export async function migrate(db: PostgresDb, options: MigrateOptions = {}): Promise<readonly string[]> {
  const schemaName = options.schema ?? 'public';
  const schema = quoteIdentifier(schemaName, 'schema');
  const files = migrations(options);
  try {
    await sqlDriver(db).transaction(async (tx) => {
      await tx.query(migrationStatements.lock);
      // Checked first: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema exists.
      if ((await tx.query(migrationStatements.schemaExists, [schemaName])).rows.length === 0) {
        await tx.exec(migrationStatements.createSchema(schema));
      }
      await tx.query(migrationStatements.useSchema, [schema]);
      for (const file of files) await tx.exec(file.sql);
      return { action: 'commit', value: undefined };
    });
  } catch (error) {
    throw toStorageError('postgres', 'migrate', error);
  }
  return files.map((file) => file.name);
}
