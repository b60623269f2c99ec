import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { buildSqlModule, generatedModulePath } from '../scripts/build-sql.js';

test('src/generated/sql.ts is compiled from the files under sql/ as they are', () => {
  expect(
    readFileSync(generatedModulePath, 'utf8'),
    'src/generated/sql.ts is stale: run `npm run build:sql -w @mailwarden/postgres` and commit it',
  ).toBe(buildSqlModule());
});
