export { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from './postgres-store.js';
export { migrate, migrations, INVALIDATION_CHANNEL, type Migration, type MigrateOptions, type MigrateResult } from './migrations.js';
