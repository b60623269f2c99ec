/** The schema as an identifier (`"mailwarden"`) and as a string literal (`'mailwarden'`), both quoted. */
export interface SchemaNames {
  identifier: string;
  literal: string;
}

/** The channel every mailwarden schema of a database notifies on; payloads name their schema. */
export const INVALIDATION_CHANNEL = 'mailwarden_invalidations';

export function schemaNames(schema: string): SchemaNames {
  if (typeof schema !== 'string' || schema.length === 0 || Buffer.byteLength(schema) > 63) {
    // Longer names would be silently truncated by PostgreSQL (NAMEDATALEN).
    throw new TypeError(`schema must be a name of 1 to 63 bytes, got ${JSON.stringify(schema)}`);
  }
  return { identifier: `"${schema.replace(/"/g, '""')}"`, literal: `'${schema.replace(/'/g, "''")}'` };
}
