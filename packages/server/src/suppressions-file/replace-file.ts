import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `path` whole or not at all: `write` fills a temporary file beside it (the same directory, so
 * the rename is atomic), which is flushed to disk and renamed over `path` only once `write` resolves.
 * On any failure the temporary file is removed and `path`, if it existed, is left byte for byte. A
 * replaced file keeps its permissions.
 *
 * @example
 * await replaceFile('acme.csv', (output) => exportSuppressions(mailwarden, { projectId: 'acme', format: 'csv', output }));
 */
export async function replaceFile<T>(path: string, write: (output: NodeJS.WritableStream) => Promise<T>): Promise<T> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const mode = await stat(path).then(
    (previous) => previous.mode & 0o777,
    () => 0o666,
  );
  // 'wx': a name that exists already is never written over, even by a concurrent run.
  const handle = await open(temporary, 'wx', mode);
  // flush: the data is on disk before the rename, so a crash leaves the old file or the new one, never an empty one.
  const output = handle.createWriteStream({ flush: true });
  let failed: Error | undefined;
  // Kept here: a write that fails while `write` is not listening must not be an uncaught 'error'.
  output.on('error', (error) => (failed ??= error));
  const closed = new Promise<void>((resolve) => output.once('close', resolve));
  try {
    const result = await write(output);
    if (failed !== undefined) throw failed;
    output.end();
    await closed;
    if (failed !== undefined) throw failed;
    await rename(temporary, path);
    return result;
  } catch (error) {
    output.destroy();
    await closed;
    await rm(temporary, { force: true });
    throw error;
  }
}
