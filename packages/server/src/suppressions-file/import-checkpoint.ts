import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { isImportFormat, type ImportFormat } from './import-formats.js';

/** Which file, project and store a checkpoint belongs to: any difference means it is stale. */
export interface ImportIdentity {
  /** Absolute path. */
  file: string;
  size: number;
  mtimeMs: number;
  projectId: string;
  /** Where the import goes: `postgres`, `redis`, `memory`, or a service's URL. */
  target: string;
  format: ImportFormat;
  /** `--stream`, when given. */
  stream?: string;
  /** `--group-stream`, when given: the sorted pairs as JSON. */
  groupStreams?: string;
}

export interface InvalidEntry {
  line: number;
  value: string;
  reason: string;
}

export interface ImportCounts {
  /** Addresses this import suppressed. */
  added: number;
  /** Addresses already suppressed whose reason this import made stronger. */
  upgraded: number;
  /** Addresses already suppressed at least as strongly (repeats within the file included). */
  alreadyPresent: number;
  /** Rows that could not be imported: no valid address, an unknown reason, an unreadable time. */
  invalid: number;
  /** Rows read but not imported on purpose: those whose `expires_at` has passed (listed in the rejects file). */
  skipped: number;
}

/** Everything before `byteOffset` is done, and the rest describes exactly those records. */
export interface ImportPosition {
  byteOffset: number;
  /** The line at `byteOffset`. */
  nextLine: number;
  /** Rows done (records other than a header or a blank row). */
  rows: number;
  counts: ImportCounts;
  /** The rejects file's length after those rows, so a resumed run cuts anything written past it. */
  rejectsBytes: number;
  /** The first invalid rows, in line order. */
  invalidEntries: InvalidEntry[];
}

/**
 * A batch sent to the store after `done`, whose answer may or may not have been recorded: a resumed
 * run sends it again. Its store answer is then `present` for whatever the first send added, so the
 * checkpoint keeps, for each item sent, how strongly its address was suppressed just before it: the
 * resumed run counts from that what the first send did.
 */
export interface InFlightBatch {
  /** Byte offset where the batch's last record ends. */
  end: number;
  /** One digit per item sent, in order: 0 not suppressed, 1 manual, 2 hard_bounce, 3 complaint. */
  before: string;
}

export interface ImportCheckpoint extends ImportIdentity {
  version: 3;
  done: ImportPosition;
  /** The batches sent after `done`, in file order, each starting where the one before it ends. */
  inFlight: InFlightBatch[];
}

/**
 * The checkpoint at `path` if it belongs to this file (same path, size and mtime), project, store and
 * format, else undefined: a missing, unreadable or stale checkpoint means starting over.
 */
export async function readCheckpoint(path: string, identity: ImportIdentity): Promise<ImportCheckpoint | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isCheckpoint(value)) return undefined;
  // The batches in flight follow `done` and each other within the file.
  let end = value.done.byteOffset;
  for (const batch of value.inFlight) end = batch.end >= end ? batch.end : Infinity;
  const same =
    value.file === identity.file &&
    value.size === identity.size &&
    value.mtimeMs === identity.mtimeMs &&
    value.projectId === identity.projectId &&
    value.target === identity.target &&
    value.format === identity.format &&
    value.stream === identity.stream &&
    value.groupStreams === identity.groupStreams &&
    end <= identity.size;
  return same ? value : undefined;
}

/**
 * Replaces the checkpoint atomically (a temporary file renamed over it), so a crash leaves the old one
 * or the new one, never half of one. No fsync: after a power loss a checkpoint may be lost, and the
 * import then starts over, which adds nothing twice (adding is idempotent) but counts again.
 */
export async function writeCheckpoint(path: string, checkpoint: ImportCheckpoint): Promise<void> {
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(checkpoint)}\n`);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

export async function deleteCheckpoint(path: string): Promise<void> {
  await rm(path, { force: true });
}

function isCheckpoint(value: unknown): value is ImportCheckpoint {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  const done = c.done as Record<string, unknown> | null | undefined;
  return (
    c.version === 3 &&
    typeof c.file === 'string' &&
    typeof c.projectId === 'string' &&
    typeof c.target === 'string' &&
    typeof c.format === 'string' &&
    isImportFormat(c.format) &&
    typeof c.size === 'number' &&
    typeof c.mtimeMs === 'number' &&
    typeof done === 'object' &&
    done !== null &&
    isCount(done.byteOffset) &&
    isCount(done.nextLine) &&
    isCount(done.rows) &&
    isCount(done.rejectsBytes) &&
    isCounts(done.counts) &&
    Array.isArray(done.invalidEntries) &&
    done.invalidEntries.every(isInvalidEntry) &&
    Array.isArray(c.inFlight) &&
    c.inFlight.every(isInFlightBatch)
  );
}

function isInFlightBatch(value: unknown): value is InFlightBatch {
  if (typeof value !== 'object' || value === null) return false;
  const batch = value as Record<string, unknown>;
  return isCount(batch.end) && typeof batch.before === 'string' && /^[0-3]*$/.test(batch.before);
}

function isCounts(value: unknown): value is ImportCounts {
  if (typeof value !== 'object' || value === null) return false;
  const counts = value as Record<string, unknown>;
  return (
    isCount(counts.added) &&
    isCount(counts.upgraded) &&
    isCount(counts.alreadyPresent) &&
    isCount(counts.invalid) &&
    isCount(counts.skipped)
  );
}

function isInvalidEntry(value: unknown): value is InvalidEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return isCount(entry.line) && typeof entry.value === 'string' && typeof entry.reason === 'string';
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
