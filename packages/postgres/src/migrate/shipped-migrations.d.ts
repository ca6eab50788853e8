/** Made at build and test time from `sql/*.sql` by `build/sql-migrations.ts`. */
declare module 'virtual:oncely-postgres-migrations' {
  /** Every shipped `.sql` file, in name order. */
  export const shippedMigrations: readonly { readonly name: string; readonly sql: string }[];
}
