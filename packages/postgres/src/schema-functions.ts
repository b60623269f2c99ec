import { functionSources } from './generated/sql.js';
import type { SchemaNames } from './schema-names.js';
import { fillPlaceholders } from './sql-placeholders.js';

/**
 * A function of the schema. Not a versioned step: every `migrate()` creates it, or replaces it when the
 * source in the database differs from this release's (`CREATE OR REPLACE`, which keeps its owner and
 * grants), so a fix to a function is an edit of its file in `sql/functions/`, not a new migration that
 * copies it. Two rules follow:
 *
 * - During a rolling deploy, instances of the previous release call the new function: it must accept
 *   what they send (`toEventColumns` in postgres-store.ts, or the array of event objects before it) and
 *   answer what they expect.
 * - `CREATE OR REPLACE` cannot change a function's arguments or result type: such a change is a
 *   numbered migration that drops the old function (it runs before the functions are defined).
 */
export interface SchemaFunction {
  name: string;
  /** The arguments as `pg_get_function_identity_arguments` prints them. */
  arguments: string;
  /** The result type as `pg_get_function_result` prints it. */
  returns: string;
  language: 'plpgsql';
  /** The source as `pg_proc.prosrc` keeps it: what `migrate()` compares to decide whether to replace it. */
  body: (schema: SchemaNames) => string;
}

/**
 * Every function of the schema, defined in this order by every `migrate()`: `sql/functions/`, compiled
 * into `src/generated/sql.ts` (`mailwarden_merge_suppressions`, then `mailwarden_apply_events`, which
 * calls it, then `mailwarden_soft_bounce`, which it calls too: PL/pgSQL resolves calls when they run).
 */
export const schemaFunctions: readonly SchemaFunction[] = functionSources.map(({ body, ...fn }) => ({
  ...fn,
  body: (schema: SchemaNames) => fillPlaceholders(body, schema),
}));
