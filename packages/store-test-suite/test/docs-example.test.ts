// docs/storage.md's "Writing a store" shows map-store.ts whole: the example readers copy is the store
// that map-store.test.ts and built-output.test.ts prove.
import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';

test('the example store of docs/storage.md is test/map-store.ts, character for character', async () => {
  const docs = await readFile(new URL('../../../docs/storage.md', import.meta.url), 'utf8');
  const section = docs.slice(docs.indexOf('\n## Writing a store\n'));
  // The fence may name the file (```ts file=map-store.ts), which the docs' typecheck writes it as.
  const block = /```ts[^\n]*\n([\s\S]*?)```/.exec(section)?.[1];
  expect(block, 'docs/storage.md: copy test/map-store.ts into the first code block of "Writing a store"').toBe(
    await readFile(new URL('map-store.ts', import.meta.url), 'utf8'),
  );
});
