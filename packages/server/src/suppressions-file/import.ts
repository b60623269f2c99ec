import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isMailwardenError, type Mailwarden } from '@mailwarden/core';
import {
  deleteCheckpoint,
  readCheckpoint,
  writeCheckpoint,
  type ImportCheckpoint,
  type ImportCounts,
  type InvalidEntry,
} from './import-checkpoint.js';
import { readLines, type FileLine } from './import-lines.js';
import { csvLayoutOf, formatFromExtension, parseCsvRow, parseJsonlRow, sniffFormat, type ImportFormat, type ImportRow } from './import-rows.js';

export type { ImportFormat } from './import-rows.js';
export type { InvalidEntry } from './import-checkpoint.js';

export interface ImportProgress {
  /** Bytes of the file done, counting from its start (also on a resumed run). */
  bytesRead: number;
  totalBytes: number;
  /** Physical lines done, blank lines and a header included. */
  lines: number;
  added: number;
  alreadyPresent: number;
  invalid: number;
}

export interface ImportOptions {
  projectId: string;
  /** Path of a CSV or JSON Lines file. */
  file: string;
  /** Default: from the extension (`.csv`, `.jsonl`, `.ndjson`), else `jsonl` if the first non-blank line starts with `{`. */
  format?: ImportFormat;
  /** Adds in flight at once. Default 32. */
  concurrency?: number;
  /** Where to keep the resume checkpoint, or false for none. Default `${file}.mailwarden-import.json`. */
  checkpoint?: string | false;
  /** Ignore an existing checkpoint and start from the first line. */
  restart?: boolean;
  /** Called every 100 lines and once at the end, with totals that cover only finished lines. */
  onProgress?: (progress: ImportProgress) => void;
  /** Stops the import: in-flight adds finish, the checkpoint is written, and the promise rejects with the reason. */
  signal?: AbortSignal;
}

export interface ImportSummary {
  /** Physical lines in the file, blank lines and a header included. */
  lines: number;
  /** Addresses this import suppressed. */
  added: number;
  /** Addresses that were already suppressed (also repeats within the file). */
  alreadyPresent: number;
  /** Rows without a valid address. */
  invalid: number;
  /** The first 1 000 invalid rows, in line order. */
  invalidEntries: InvalidEntry[];
  /** Set when this run continued an interrupted one: the last line that run had finished. */
  resumedFromLine?: number;
}

const DEFAULT_CONCURRENCY = 32;
const CHECKPOINT_EVERY_LINES = 1000;
const PROGRESS_EVERY_LINES = 100;
const MAX_INVALID_ENTRIES = 1000;
const MAX_VALUE_LENGTH = 200;
// Lines read ahead of the first unfinished add (blank and invalid ones need no add): bounds memory
// when one add is slow.
const MAX_WINDOW_LINES = 10_000;

type Outcome =
  | { kind: 'added' | 'alreadyPresent' | 'skipped' }
  | { kind: 'invalid'; value: string; reason: string }
  | { kind: 'failed'; error: unknown };

/** A line read but not yet done, or done after an earlier line that is not. */
interface Pending {
  line: FileLine;
  isAdd: boolean;
  outcome: Outcome | undefined;
  settled: Promise<void>;
}

/**
 * Suppresses (`manual`) every address of a CSV or JSON Lines file, streaming it with bounded
 * concurrency, in constant memory. Rows without a valid address are counted and the first 1 000 are
 * listed; any other error (such as `store_unavailable`) stops the import and is rethrown.
 *
 * Resumable: a checkpoint file records the byte offset up to which every line is done. Rerunning on the
 * same unchanged file and project continues from there; a changed file starts over. The checkpoint is
 * deleted after a complete run.
 *
 * @example
 * const summary = await importSuppressions(mailwarden, { projectId: 'acme', file: 'bounces.csv' });
 * console.log(`${summary.added} added, ${summary.alreadyPresent} already suppressed, ${summary.invalid} invalid`);
 */
export async function importSuppressions(mailwarden: Pick<Mailwarden, 'suppressions'>, options: ImportOptions): Promise<ImportSummary> {
  const { projectId, signal, onProgress } = options;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a positive integer.');
  signal?.throwIfAborted();

  const file = resolve(options.file);
  const { size, mtimeMs } = await stat(file);
  const checkpointPath = options.checkpoint === false ? undefined : (options.checkpoint ?? `${options.file}.mailwarden-import.json`);
  let resumed = checkpointPath === undefined || options.restart === true ? undefined : await readCheckpoint(checkpointPath, { file, size, mtimeMs, projectId });
  if (resumed !== undefined && options.format !== undefined && resumed.format !== null && resumed.format !== options.format) {
    resumed = undefined;
  }

  // Everything up to `done` (a line number and the byte offset after it) has finished, and the counts
  // cover exactly those lines, so a checkpoint of them is never ahead of the store.
  const done = { line: resumed?.line ?? 0, byteOffset: resumed?.byteOffset ?? 0 };
  const counts: ImportCounts = { ...(resumed?.counts ?? { added: 0, alreadyPresent: 0, invalid: 0 }) };
  const invalidEntries: InvalidEntry[] = resumed?.invalidEntries ?? [];
  let format: ImportFormat | undefined = resumed?.format ?? options.format ?? formatFromExtension(file);
  let csvEmailColumn: number | undefined = resumed?.csvEmailColumn ?? undefined;

  const checkpoint = (): ImportCheckpoint => ({
    version: 1,
    file,
    size,
    mtimeMs,
    projectId,
    byteOffset: done.byteOffset,
    line: done.line,
    counts,
    invalidEntries,
    format: format ?? null,
    csvEmailColumn: csvEmailColumn ?? null,
  });
  const progress = (): ImportProgress => ({ bytesRead: done.byteOffset, totalBytes: size, lines: done.line, ...counts });

  const rowOf = (text: string): ImportRow | undefined => {
    if (text.trim() === '') return undefined;
    format ??= sniffFormat(text);
    if (format === 'jsonl') return parseJsonlRow(text);
    if (csvEmailColumn === undefined) {
      const layout = csvLayoutOf(text);
      csvEmailColumn = layout.emailColumn;
      if (layout.header) return undefined;
    }
    return parseCsvRow(text, csvEmailColumn);
  };

  // Every import is `manual`: the suppression API only adds manual suppressions, so a `reason` column is
  // ignored. `add` is idempotent, which is what makes resuming safe: a crash between an add and the next
  // checkpoint only means re-adding up to `concurrency` addresses, which then count as alreadyPresent.
  const addOne = async (email: string): Promise<Outcome> => {
    try {
      const { created } = await mailwarden.suppressions.add(projectId, email, { source: 'import' });
      return { kind: created ? 'added' : 'alreadyPresent' };
    } catch (error) {
      if (isMailwardenError(error) && error.code === 'invalid_email') return { kind: 'invalid', value: email, reason: invalidReasonOf(error) };
      return { kind: 'failed', error };
    }
  };

  const finish = (line: FileLine, outcome: Outcome) => {
    done.line = line.number;
    done.byteOffset = line.end;
    if (outcome.kind === 'added') counts.added++;
    else if (outcome.kind === 'alreadyPresent') counts.alreadyPresent++;
    else if (outcome.kind === 'invalid') {
      counts.invalid++;
      if (invalidEntries.length < MAX_INVALID_ENTRIES) {
        invalidEntries.push({ line: line.number, value: truncate(outcome.value), reason: outcome.reason });
      }
    }
  };

  // Lines in file order; a line is finished only once it and every earlier line are done.
  const window: Pending[] = [];
  let addsInWindow = 0;
  let failure: { error: unknown } | undefined;
  const finishSettled = () => {
    for (let head = window[0]; head?.outcome !== undefined && head.outcome.kind !== 'failed'; head = window[0]) {
      window.shift();
      if (head.isAdd) addsInWindow--;
      finish(head.line, head.outcome);
    }
  };

  const start = (line: FileLine) => {
    const row = line.text === undefined ? ({ kind: 'invalid', value: '', reason: 'line longer than 1 MiB' } as const) : rowOf(line.text);
    if (row?.kind === 'email') {
      const pending: Pending = { line, isAdd: true, outcome: undefined, settled: Promise.resolve() };
      pending.settled = addOne(row.email).then((outcome) => {
        pending.outcome = outcome;
        if (outcome.kind === 'failed') failure ??= { error: outcome.error };
      });
      window.push(pending);
      addsInWindow++;
      return;
    }
    const outcome: Outcome = row === undefined ? { kind: 'skipped' } : { kind: 'invalid', value: row.value, reason: row.reason };
    if (window.length === 0) finish(line, outcome);
    else window.push({ line, isAdd: false, outcome, settled: Promise.resolve() });
  };

  let nextProgress = done.line + PROGRESS_EVERY_LINES;
  let nextCheckpoint = done.line + CHECKPOINT_EVERY_LINES;
  try {
    reading: for await (const batch of readLines(file, { start: done.byteOffset, firstLine: done.line + 1 })) {
      for (const line of batch) {
        if (failure !== undefined || signal?.aborted) break reading;
        start(line);
        finishSettled();
        // At most `concurrency` adds past the last finished line: that also bounds the re-adds after a crash.
        while (failure === undefined && (addsInWindow >= concurrency || window.length >= MAX_WINDOW_LINES)) {
          await window[0]!.settled;
          finishSettled();
        }
        if (done.line >= nextProgress) {
          nextProgress = done.line + PROGRESS_EVERY_LINES;
          onProgress?.(progress());
        }
        if (checkpointPath !== undefined && done.line >= nextCheckpoint) {
          nextCheckpoint = done.line + CHECKPOINT_EVERY_LINES;
          await writeCheckpoint(checkpointPath, checkpoint());
        }
      }
    }
  } catch (error) {
    failure ??= { error };
  }
  await Promise.all(window.map((pending) => pending.settled));
  finishSettled();

  if (failure !== undefined || signal?.aborted) {
    if (checkpointPath !== undefined) {
      // The original error matters more than a failed checkpoint write.
      await writeCheckpoint(checkpointPath, checkpoint()).catch(() => {});
    }
    throw failure === undefined ? signal?.reason : failure.error;
  }
  if (checkpointPath !== undefined) await deleteCheckpoint(checkpointPath);
  onProgress?.(progress());
  return {
    lines: done.line,
    ...counts,
    invalidEntries,
    ...(resumed === undefined ? {} : { resumedFromLine: resumed.line }),
  };
}

/** The short reason `normalizeEmail` gives in its details (`missing @`), else the message. */
function invalidReasonOf(error: { message: string; details: unknown }): string {
  const detail: unknown = Array.isArray(error.details) ? error.details[0] : undefined;
  const reason = typeof detail === 'object' && detail !== null ? (detail as { reason?: unknown }).reason : undefined;
  return typeof reason === 'string' ? reason : error.message;
}

function truncate(value: string): string {
  if (value.length <= MAX_VALUE_LENGTH) return value;
  // Do not cut a surrogate pair in half.
  const end = /[\uD800-\uDBFF]/.test(value[MAX_VALUE_LENGTH - 1]!) ? MAX_VALUE_LENGTH - 1 : MAX_VALUE_LENGTH;
  return value.slice(0, end);
}
