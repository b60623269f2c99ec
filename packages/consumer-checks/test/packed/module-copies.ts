import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Source modules bundled into more than one file of the same format (`.js` for ESM, `.cjs` for
 * CommonJS), read from the source maps shipped beside them. A module in two files of one format runs
 * twice, so its classes and caches exist twice: `MailwardenError` of one entry would not be the
 * `instanceof` target of another. Each answer: `format: source in file, file`.
 */
export async function modulesInSeveralFiles(packageDir: string, files: readonly string[]): Promise<string[]> {
  const filesBySource = new Map<string, string[]>();
  for (const map of files.filter((file) => /\.[cm]?js\.map$/.test(file))) {
    const format = map.endsWith('.cjs.map') ? 'cjs' : 'esm';
    const { sources } = JSON.parse(await readFile(join(packageDir, map), 'utf8')) as { sources: string[] };
    for (const source of sources) {
      const key = `${format}: ${source.replace(/^(?:\.\.\/)+/, '')}`;
      filesBySource.set(key, [...(filesBySource.get(key) ?? []), map.replace(/\.map$/, '')]);
    }
  }
  return [...filesBySource].filter(([, inFiles]) => inFiles.length > 1).map(([key, inFiles]) => `${key} in ${inFiles.join(', ')}`);
}
