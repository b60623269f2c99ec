// docs/http.md, "Scopes": its route × scope table is `Route.scope` of the routes, row for row, so the
// docs cannot drift from what the handler enforces. On a failure, paste the expected table into the docs.
import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { routes } from '../src/http/routes.js';
import { unsubscribeRoutes } from '../src/http/unsubscribe-routes.js';

/** The table as docs/http.md has it: one row per API-key route, in the route table's order. */
function scopeTable(): string {
  const rows = [...routes, ...unsubscribeRoutes]
    .filter((route) => route.auth === 'api_key')
    .map(
      (route) => `| \`${route.method} ${route.path}\` | ${route.scope === undefined ? 'any key of the project' : `\`${route.scope}\``} |`,
    );
  return ['| route | scope |', '|---|---|', ...rows].join('\n');
}

test('the route × scope table of docs/http.md is the routes', async () => {
  const docs = await readFile(new URL('../../../docs/http.md', import.meta.url), 'utf8');
  const start = docs.indexOf('\n## Scopes\n');
  expect(start, 'docs/http.md has a "## Scopes" section').toBeGreaterThan(0);
  const section = docs.slice(start + 1, docs.indexOf('\n## ', start + 1));
  const table = /^\| route \| scope \|\n[\s\S]*?(?=\n(?!\|))/m.exec(section)?.[0];
  expect(table, `docs/http.md, "Scopes": the table should read\n${scopeTable()}`).toBe(scopeTable());
});
