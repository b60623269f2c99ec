import { open, rm, stat, type FileHandle } from 'node:fs/promises';
import { csvField } from './export.js';

/** A row that was not imported, as the rejects file lists it. */
export interface RejectedRow {
  line: number;
  value: string;
  reason: string;
}

export interface RejectsFile {
  /** Appends rows (in line order) and resolves once they are written. */
  write(rows: readonly RejectedRow[]): Promise<void>;
  /** Its length so far: what a checkpoint records. */
  readonly bytes: number;
  /** Whether it holds anything. */
  readonly written: boolean;
  close(): Promise<void>;
}

const HEADER = 'line,value,reason\n';
/** Values are cut here: a row over 1 MiB should not make a 1 MiB line of the rejects file. */
const MAX_VALUE_LENGTH = 1000;

/**
 * The CSV of rows that were not imported (`line,value,reason`), created at the first one. A resumed
 * import cuts it back to the length its checkpoint recorded, so the rows of a batch that was being
 * written when the import stopped are listed once.
 *
 * @example
 * const rejects = await openRejectsFile('bounces.csv.rejects.csv', { keepBytes: 0 });
 * await rejects.write([{ line: 7, value: 'not-an-address', reason: 'missing @' }]);
 * await rejects.close();
 */
export async function openRejectsFile(path: string, options: { keepBytes: number }): Promise<RejectsFile> {
  let bytes = 0;
  if (options.keepBytes === 0) await rm(path, { force: true });
  else {
    const size = await stat(path).then(
      (stats) => stats.size,
      () => 0,
    );
    // A rejects file shorter than the checkpoint says was removed or cut by hand: start it again.
    if (size < options.keepBytes) await rm(path, { force: true });
    else {
      const handle = await open(path, 'r+');
      await handle.truncate(options.keepBytes);
      await handle.close();
      bytes = options.keepBytes;
    }
  }
  let handle: FileHandle | undefined;
  return {
    async write(rows) {
      if (rows.length === 0) return;
      handle ??= await open(path, 'a');
      const text =
        (bytes === 0 ? HEADER : '') +
        rows.map(({ line, value, reason }) => `${line},${csvField(cut(value))},${csvField(reason)}\n`).join('');
      const buffer = Buffer.from(text);
      await handle.write(buffer);
      bytes += buffer.length;
    },
    get bytes() {
      return bytes;
    },
    get written() {
      return bytes > 0;
    },
    async close() {
      await handle?.close();
      handle = undefined;
    },
  };
}

function cut(value: string): string {
  if (value.length <= MAX_VALUE_LENGTH) return value;
  // Do not cut a surrogate pair in half.
  const end = /[\uD800-\uDBFF]/.test(value[MAX_VALUE_LENGTH - 1]!) ? MAX_VALUE_LENGTH - 1 : MAX_VALUE_LENGTH;
  return value.slice(0, end);
}
