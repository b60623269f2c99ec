// A migration is run once per database, so the text of a shipped one may never change: a database the
// previous release migrated must find nothing new to apply, and every step must mean what it meant.
import { describe, expect, test } from 'vitest';
import { migrations } from '../src/index.js';
import { schemaNames } from '../src/schema-names.js';
import * as before from './fixtures/migrations-before-sql-files.js';

describe('the migrations from sql/migrations/', () => {
  test("start with the previous release's, each the same version and name", () => {
    expect(migrations.slice(0, before.migrations.length).map(({ version, name }) => ({ version, name }))).toStrictEqual(
      before.migrations.map(({ version, name }) => ({ version, name })),
    );
  });

  // Names that need quoting as an identifier and as a literal, so the placeholders' quoting is compared too.
  test.each(['mailwarden', 'mw_test_0123456789ab', 'Mixed Case', `we"ird'name`])(
    "run the same text as the previous release's on schema %j",
    (schema) => {
      for (const [index, previous] of before.migrations.entries()) {
        expect(migrations[index]!.sql(schemaNames(schema)), `migration ${previous.version} ${previous.name}`).toBe(
          previous.sql(schemaNames(schema)),
        );
      }
    },
  );
});
