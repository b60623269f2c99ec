export { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from './postgres-store.js';
export { migrate, migrations, type Migration, type MigrateOptions, type MigrateResult } from './migrations.js';
export { schemaFunctions, type SchemaFunction } from './schema-functions.js';
export { INVALIDATION_CHANNEL, type SchemaNames } from './schema-names.js';
