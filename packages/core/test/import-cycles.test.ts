import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, relativeSpecifiers } from './import-graph.js';

// No import circle in any package's source: every package's src/, and the dashboard's ui/ (the app's
// own source). Type-only imports count: a circle of types still ties two modules to each other, so
// neither can be read, moved or split without the other, and it is how value circles start (the
// vocabulary circle of facts, encodings and reasons was half type-only). Core's layers: layers.test.ts.

const packages = fileURLToPath(new URL('../../', import.meta.url));
const sourceFolders = readdirSync(packages, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) => ['src', 'ui'].map((folder) => `${entry.name}/${folder}`))
  .filter((folder) => existsSync(join(packages, folder)))
  .sort();

describe('import cycles', () => {
  it('reads the source of every package', () => {
    expect(sourceFolders).toEqual(expect.arrayContaining(['core/src', 'server/src', 'store-test-suite/src', 'dashboard/ui']));
  });

  it.each(sourceFolders)('packages/%s has no import circle', (folder) => {
    expect(importCycles(importGraph(join(packages, folder)))).toEqual([]);
  });

  it('finds a circle of any length, a module that imports itself, and none in a tree', () => {
    const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
    expect(importCycles(graph({ 'a.ts': ['b.ts'], 'b.ts': ['c.ts'], 'c.ts': ['a.ts', 'd.ts'], 'd.ts': [] }))).toEqual([
      'a.ts → b.ts → c.ts → a.ts',
    ]);
    expect(importCycles(graph({ 'a.ts': ['a.ts'] }))).toEqual(['a.ts → a.ts']);
    expect(importCycles(graph({ 'a.ts': ['b.ts', 'c.ts'], 'b.ts': ['c.ts'], 'c.ts': [] }))).toEqual([]);
  });

  it('counts type-only imports, re-exports and import() types, but no import shown in a comment', () => {
    const text = [
      "import type { A } from './a.js';",
      "export { b } from '../b.js';",
      "type C = import('./c.js').C;",
      '/** @example',
      " * import { d } from '../src/index.js';",
      ' */',
      "import { z } from 'zod';",
    ].join('\n');
    expect(relativeSpecifiers(text)).toEqual(['./a.js', '../b.js', './c.js']);
  });
});
