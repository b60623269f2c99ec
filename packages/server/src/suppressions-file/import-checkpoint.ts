import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { ImportFormat } from './import-rows.js';

/** Which file and project a checkpoint belongs to: any difference means it is stale. */
export interface ImportIdentity {
  /** Absolute path. */
  file: string;
  size: number;
  mtimeMs: number;
  projectId: string;
}

export interface InvalidEntry {
  line: number;
  value: string;
  reason: string;
}

export interface ImportCounts {
  added: number;
  alreadyPresent: number;
  invalid: number;
}

/**
 * How far an import got: every line up to `line` (ending at `byteOffset`) is done, and `counts` and
 * `invalidEntries` cover exactly those lines. Also what was decided on the first lines, which a resumed
 * run does not read again.
 */
export interface ImportCheckpoint extends ImportIdentity {
  version: 1;
  byteOffset: number;
  line: number;
  counts: ImportCounts;
  invalidEntries: InvalidEntry[];
  /** Null until the first non-blank line was read. */
  format: ImportFormat | null;
  /** CSV only; null until the first non-blank row was read. */
  csvEmailColumn: number | null;
}

/**
 * The checkpoint at `path` if it belongs to this file (same path, size and mtime) and project, else
 * undefined: a missing, unreadable or stale checkpoint means starting over.
 */
export async function readCheckpoint(path: string, identity: ImportIdentity): Promise<ImportCheckpoint | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isCheckpoint(value)) return undefined;
  const same =
    value.file === identity.file &&
    value.size === identity.size &&
    value.mtimeMs === identity.mtimeMs &&
    value.projectId === identity.projectId &&
    value.byteOffset <= identity.size;
  return same ? value : undefined;
}

/**
 * Replaces the checkpoint atomically (a temporary file renamed over it), so a crash leaves the old one
 * or the new one, never half of one. No fsync: after a power loss a checkpoint may be lost or unreadable,
 * and the import then starts over, which is safe because adding is idempotent.
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
  const counts = c.counts as Record<string, unknown> | null | undefined;
  return (
    c.version === 1 &&
    typeof c.file === 'string' &&
    typeof c.projectId === 'string' &&
    typeof c.size === 'number' &&
    typeof c.mtimeMs === 'number' &&
    isCount(c.byteOffset) &&
    isCount(c.line) &&
    typeof counts === 'object' &&
    counts !== null &&
    isCount(counts.added) &&
    isCount(counts.alreadyPresent) &&
    isCount(counts.invalid) &&
    Array.isArray(c.invalidEntries) &&
    c.invalidEntries.every(isInvalidEntry) &&
    (c.format === null || c.format === 'csv' || c.format === 'jsonl') &&
    (c.csvEmailColumn === null || isCount(c.csvEmailColumn))
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
