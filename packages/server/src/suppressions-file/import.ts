import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MAX_BATCH_SIZE, MAX_BULK_SIZE, tryNormalizeEmail, type BulkAddItem, type BulkAddResult, type SuppressionReason } from '@mailwarden/core';
import {
  deleteCheckpoint,
  readCheckpoint,
  writeCheckpoint,
  type ImportCheckpoint,
  type ImportCounts,
  type ImportPosition,
  type InvalidEntry,
} from './import-checkpoint.js';
import { readCsvRecords } from './import-csv.js';
import { planImport, type ImportFormat, type ImportPlan } from './import-formats.js';
import { readJsonArrayRecords } from './import-json.js';
import { readJsonLineRecords } from './import-lines.js';
import { ImportFileError, type SourceRecord } from './import-records.js';
import { openRejectsFile, type RejectedRow, type RejectsFile } from './import-rejects.js';
import type { SuppressionTarget } from './target.js';

export type { ImportFormat } from './import-formats.js';
export type { ImportCounts, InvalidEntry } from './import-checkpoint.js';

export interface ImportProgress extends ImportCounts {
  /** Bytes of the file done, counting from its start (also on a resumed run). */
  bytesRead: number;
  totalBytes: number;
  /** Rows done, a resumed run's earlier rows included. */
  rows: number;
}

export interface ImportOptions {
  projectId: string;
  file: string;
  /** Default: decided from the file (see `planImport`). */
  format?: ImportFormat;
  /** Where the import goes, for the checkpoint: a checkpoint of another store is not resumed. Default `store`. */
  targetName?: string;
  /** Where to keep the resume checkpoint, or false for none. Default `${file}.mailwarden-import.json`. */
  checkpoint?: string | false;
  /** Where to list rows that were not imported, or false for nowhere. Default `${file}.rejects.csv`. */
  rejects?: string | false;
  /** Ignore an existing checkpoint and start from the first record. */
  restart?: boolean;
  /** Items per bulk add, at most (and by default) 1 000. */
  batchSize?: number;
  /** Called once the format is decided, before the first row is read. */
  onStart?: (start: { format: ImportFormat; detectedBy: string; resumedFromLine?: number }) => void;
  /** Called after every batch, with totals that cover only finished rows. */
  onProgress?: (progress: ImportProgress) => void;
  /** Stops the import: the batch in flight finishes, the checkpoint is written, and the promise rejects with the reason. */
  signal?: AbortSignal;
}

export interface ImportSummary extends ImportCounts {
  format: ImportFormat;
  /** How the format was decided: `given`, or what in the file gave it away. */
  detectedBy: string;
  /** Rows read: records other than a header or a blank row. */
  rows: number;
  /** The rejects file, if any row was not imported. */
  rejectsFile: string | null;
  /** The first 100 invalid rows, in line order (all of them, and the skipped ones, are in the rejects file). */
  invalidEntries: InvalidEntry[];
  /** Set when this run continued an interrupted one: the line it continued from. */
  resumedFromLine?: number;
}

const MAX_RECORDS_PER_BATCH = 10_000;
const MAX_INVALID_ENTRIES = 100;
const MAX_VALUE_LENGTH = 200;
const RANKS: Record<SuppressionReason, number> = { manual: 1, hard_bounce: 2, complaint: 3 };

/** One address to send, and where it came from. */
interface BatchItem {
  item: BulkAddItem;
  /** The normalized address: what the store keys it by. */
  key: string;
  rank: number;
  line: number;
  value: string;
  /** Its place among the batch's records, which orders the rejects file. */
  order: number;
}

/** A batch the store answered, and what its addresses were before it (when it was checked). */
interface SentBatch {
  batch: Batch;
  before: number[] | undefined;
  results: BulkAddResult[];
}

/** Records read up to a cut, in order: the items to send and the rows that were decided without the store. */
interface Batch {
  end: number;
  nextLine: number;
  rows: number;
  items: BatchItem[];
  /** Invalid and skipped rows found while reading, with their place among the items for the rejects file. */
  local: LocalReject[];
}

type LocalReject = RejectedRow & { kind: 'invalid' | 'skipped'; order: number };

/**
 * Imports a suppression list from a file: our CSV and JSON Lines, or a provider's export (SES,
 * SendGrid, Postmark, Mailgun), keeping each row's reason and time and recording `source: import`.
 * Streams the file in constant memory and sends up to 1 000 addresses per bulk add, one batch in
 * flight while the next is read and checked. Rows that cannot be imported are counted and listed in a
 * rejects file; any other error (such as `store_unavailable`) stops the import and is rethrown.
 *
 * Resumable, with exact counts: before each batch is sent, a checkpoint records where the rows before
 * it end, their counts, and how strongly each of the batch's addresses was suppressed just before it.
 * A rerun on the same unchanged file, project and store sends that batch again and counts what its
 * first send did from those, so a crash at any point (SIGKILL included) ends in the same summary as
 * an uninterrupted run. The checkpoint is deleted after a complete run.
 *
 * @example
 * const summary = await importSuppressions(mailwarden, { projectId: 'acme', file: 'ses-suppressions.json' });
 * console.log(`${summary.added} added, ${summary.upgraded} upgraded, ${summary.invalid} invalid`);
 */
export async function importSuppressions(service: { suppressions: SuppressionTarget }, options: ImportOptions): Promise<ImportSummary> {
  const target = service.suppressions;
  const { projectId, signal, onProgress } = options;
  const batchSize = options.batchSize ?? MAX_BULK_SIZE;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_BULK_SIZE) {
    throw new RangeError(`batchSize must be a whole number from 1 to ${MAX_BULK_SIZE}.`);
  }
  signal?.throwIfAborted();

  const file = resolve(options.file);
  const { size, mtimeMs } = await stat(file);
  const plan = await planImport(file, options.format);
  const identity = { file, size, mtimeMs, projectId, target: options.targetName ?? 'store', format: plan.format };
  const checkpointPath = options.checkpoint === false ? undefined : (options.checkpoint ?? `${options.file}.mailwarden-import.json`);
  const resumed = checkpointPath === undefined || options.restart === true ? undefined : await readCheckpoint(checkpointPath, identity);
  const resumedFromLine = resumed?.done.nextLine;

  const done: ImportPosition = resumed?.done ?? {
    byteOffset: 0,
    nextLine: 1,
    rows: 0,
    counts: { added: 0, upgraded: 0, alreadyPresent: 0, invalid: 0, skipped: 0 },
    rejectsBytes: 0,
    invalidEntries: [],
  };
  const rejectsPath = options.rejects === false ? undefined : (options.rejects ?? `${options.file}.rejects.csv`);
  const rejects = rejectsPath === undefined ? undefined : await openRejectsFile(rejectsPath, { keepBytes: done.rejectsBytes });

  options.onStart?.({ format: plan.format, detectedBy: plan.detectedBy, ...(resumedFromLine === undefined ? {} : { resumedFromLine }) });

  const checkpointOf = (inFlight: ImportCheckpoint['inFlight']): ImportCheckpoint => ({ version: 2, ...identity, done, inFlight });
  const progress = (): ImportProgress => ({ bytesRead: done.byteOffset, totalBytes: size, rows: done.rows, ...done.counts });

  const batches = readBatches(plan, file, done, batchSize, resumed?.inFlight?.end);
  const readNext = async (): Promise<Batch | undefined> => {
    if (signal?.aborted === true) return undefined;
    const next = await batches.next();
    return next.done === true ? undefined : next.value;
  };
  // A resumed run sends the batch that was in flight again, with what its addresses were before it.
  let resentBefore = resumed?.inFlight === null || resumed?.inFlight === undefined ? undefined : [...resumed.inFlight.before].map(Number);
  const check = (batch: Batch | undefined, resending: boolean): Promise<Map<string, number>> | undefined => {
    if (batch === undefined || resending || checkpointPath === undefined || batch.items.length === 0) return undefined;
    const checking = checkStates(target, projectId, batch.items);
    checking.catch(() => {});
    return checking;
  };

  // Three batches at a time: one being stored (`pending`), the next one being checked (`ahead`), and
  // the one after being read, so the store always has work queued while the file is read. A batch is
  // checked once the batch two before it is answered, and what the batch just before it does is applied
  // over the check (`statesBefore`), whether the check saw it or not.
  let pending: { batch: Batch; before: number[] | undefined; sent: Promise<{ results: BulkAddResult[] }>; resent: boolean } | undefined;
  let ahead: Batch | undefined;
  let aheadChecking: Promise<Map<string, number>> | undefined;

  try {
    ahead = await readNext();
    aheadChecking = check(ahead, resentBefore !== undefined);
    for (;;) {
      const following = await readNext();
      let previous: SentBatch | undefined;
      if (pending !== undefined) {
        const { results } = await pending.sent;
        await count(pending.batch, results, pending.resent ? pending.before : undefined, done, rejects);
        previous = { batch: pending.batch, before: pending.before, results };
        pending = undefined;
        onProgress?.(progress());
      }
      if (ahead === undefined || signal?.aborted === true) break;

      const batch = ahead;
      let before: number[] | undefined;
      const resent = resentBefore !== undefined;
      if (resentBefore !== undefined) {
        before = resentBefore;
        resentBefore = undefined;
        if (before.length !== batch.items.length) {
          throw new ImportFileError('The checkpoint does not match the file (was it edited in place?). Import again with --restart.');
        }
      } else if (aheadChecking !== undefined) {
        before = statesBefore(batch.items, await aheadChecking, previous);
      }
      if (batch.items.length === 0) {
        await count(batch, [], undefined, done, rejects);
        onProgress?.(progress());
      } else {
        if (checkpointPath !== undefined) {
          await writeCheckpoint(checkpointPath, checkpointOf({ end: batch.end, before: before!.join('') }));
        }
        const sent = target.addMany(
          projectId,
          batch.items.map(({ item }) => item),
          { source: 'import' },
        );
        sent.catch(() => {});
        pending = { batch, before, sent, resent };
      }
      // Checked after the add just sent, which the store then takes first.
      ahead = following;
      aheadChecking = check(following, false);
    }
  } catch (error) {
    // Let the add in flight finish, so its rows are counted as the store has them; a batch whose answer
    // never came stays in flight in the checkpoint, to be sent again.
    let settled = true;
    if (pending !== undefined) {
      const { batch, before, resent } = pending;
      settled = await pending.sent
        .then(async ({ results }) => {
          await count(batch, results, resent ? before : undefined, done, rejects);
          return true;
        })
        .catch(() => false);
    }
    // Nothing done, nothing to resume (a file that is not its format fails before its first row).
    if (settled && checkpointPath !== undefined && done.byteOffset > 0) await writeCheckpoint(checkpointPath, checkpointOf(null)).catch(() => {});
    await rejects?.close().catch(() => {});
    await batches.return(undefined).catch(() => {});
    throw error;
  }
  await rejects?.close();

  if (signal?.aborted === true) {
    if (checkpointPath !== undefined) await writeCheckpoint(checkpointPath, checkpointOf(null));
    throw signal.reason;
  }
  if (checkpointPath !== undefined) await deleteCheckpoint(checkpointPath);
  onProgress?.(progress());
  return {
    format: plan.format,
    detectedBy: plan.detectedBy,
    rows: done.rows,
    ...done.counts,
    rejectsFile: rejects?.written === true ? rejectsPath! : null,
    invalidEntries: done.invalidEntries,
    ...(resumedFromLine === undefined ? {} : { resumedFromLine }),
  };
}

/**
 * The file's records from `done` on, cut into batches of at most `batchSize` items (or 10 000
 * records). The first batch of a resumed run ends where the batch that was in flight ended, so the
 * same items are sent again.
 */
async function* readBatches(plan: ImportPlan, file: string, done: ImportPosition, batchSize: number, firstEnd: number | undefined): AsyncGenerator<Batch> {
  const from = { start: done.byteOffset, firstLine: done.nextLine };
  const source: AsyncGenerator<SourceRecord[]> =
    plan.container === 'csv'
      ? readCsvRecords(file, { ...from, delimiter: plan.delimiter })
      : plan.container === 'jsonl'
        ? readJsonLineRecords(file, from)
        : readJsonArrayRecords(file, { ...from, arrayKey: plan.arrayKey });
  let first = done.byteOffset === 0;
  let cut = firstEnd;
  let batch: Batch = { end: done.byteOffset, nextLine: done.nextLine, rows: 0, items: [], local: [] };
  let batchStart = batch.end;
  let records = 0;
  for await (const chunk of source) {
    for (const record of chunk) {
      const row = plan.interpret(record, first);
      first = false;
      records++;
      const order = records;
      batch.end = record.end;
      batch.nextLine = record.nextLine;
      if (row.kind === 'add') {
        batch.rows++;
        const normalized = tryNormalizeEmail(row.email);
        if (normalized.ok) {
          const { email, reason, createdAt } = row;
          const item: BulkAddItem = createdAt === undefined ? { email, reason } : { email, reason, created_at: createdAt };
          batch.items.push({ item, key: normalized.email, rank: RANKS[row.reason], line: record.line, value: record.text, order });
        } else batch.local.push({ kind: 'invalid', line: record.line, value: row.email, reason: normalized.reason, order });
      } else if (row.kind === 'invalid' || row.kind === 'skip') {
        batch.rows++;
        batch.local.push({ kind: row.kind === 'skip' ? 'skipped' : 'invalid', line: record.line, value: row.value, reason: row.why, order });
      }
      const full = cut === undefined ? batch.items.length >= batchSize || records >= MAX_RECORDS_PER_BATCH : batch.end >= cut;
      if (full) {
        yield batch;
        cut = undefined;
        records = 0;
        batchStart = batch.end;
        batch = { end: batch.end, nextLine: batch.nextLine, rows: 0, items: [], local: [] };
      }
    }
  }
  if (batch.end > batchStart) yield batch;
}

/** How strongly each address of a batch is suppressed now (0: not at all), in checks of 100. */
async function checkStates(target: SuppressionTarget, projectId: string, items: readonly BatchItem[]): Promise<Map<string, number>> {
  const keys = [...new Set(items.map((item) => item.key))];
  const parts: string[][] = [];
  for (let i = 0; i < keys.length; i += MAX_BATCH_SIZE) parts.push(keys.slice(i, i + MAX_BATCH_SIZE));
  const answers = await Promise.all(parts.map((part) => target.checkMany(projectId, part)));
  const states = new Map<string, number>();
  answers.forEach(({ results }, index) =>
    results.forEach((result, i) => states.set(parts[index]![i]!, result.suppressed ? RANKS[result.reason] : 0)),
  );
  return states;
}

/**
 * For each item, how strongly its address is suppressed just before it is added: the checked state,
 * after the previous batch (checked while it was being added, so what it did is applied over the
 * check) and the batch's own earlier items.
 */
function statesBefore(items: readonly BatchItem[], checked: Map<string, number>, previous: SentBatch | undefined): number[] {
  const states = new Map(checked);
  if (previous !== undefined) {
    previous.results.forEach((result, i) => {
      const { key, rank } = previous.batch.items[i]!;
      // created and upgraded leave this item's reason; present leaves what was there, at least as strong.
      if (result.status === 'created' || result.status === 'upgraded') states.set(key, rank);
      else if (result.status === 'present') states.set(key, Math.max(previous.before?.[i] ?? 0, rank));
    });
  }
  return items.map(({ key, rank }) => {
    const before = states.get(key) ?? 0;
    states.set(key, Math.max(before, rank));
    return before;
  });
}

/**
 * Counts a batch the store answered and lists its rejects. For a batch sent again after a resume,
 * `before` says what the first send found: an item the store now calls `present` was added (or made
 * stronger) by that first send if its address was not suppressed (or less strongly) just before it.
 */
async function count(batch: Batch, results: BulkAddResult[], before: number[] | undefined, done: ImportPosition, rejects: RejectsFile | undefined): Promise<void> {
  if (results.length !== batch.items.length) {
    throw new Error(`The store answered ${results.length} results for ${batch.items.length} items.`);
  }
  const counts = { ...done.counts };
  const rejected: LocalReject[] = [...batch.local];
  results.forEach((result, i) => {
    const { rank, line, value, order } = batch.items[i]!;
    let status = result.status;
    if (status === 'present' && before !== undefined) {
      const was = before[i]!;
      status = was === 0 ? 'created' : rank > was ? 'upgraded' : 'present';
    }
    if (status === 'created') counts.added++;
    else if (status === 'upgraded') counts.upgraded++;
    else if (status === 'present') counts.alreadyPresent++;
    else if (result.status === 'invalid') rejected.push({ kind: 'invalid', line, value, reason: result.error.message, order });
  });
  rejected.sort((a, b) => a.order - b.order);
  const invalidEntries = [...done.invalidEntries];
  for (const row of rejected) {
    if (row.kind === 'skipped') counts.skipped++;
    else {
      counts.invalid++;
      if (invalidEntries.length < MAX_INVALID_ENTRIES) invalidEntries.push({ line: row.line, value: truncate(row.value), reason: row.reason });
    }
  }
  await rejects?.write(rejected.map(({ line, value, reason }) => ({ line, value, reason })));
  Object.assign(done, {
    byteOffset: batch.end,
    nextLine: batch.nextLine,
    rows: done.rows + batch.rows,
    counts,
    rejectsBytes: rejects?.bytes ?? 0,
    invalidEntries,
  });
}

function truncate(value: string): string {
  if (value.length <= MAX_VALUE_LENGTH) return value;
  // Do not cut a surrogate pair in half.
  const end = /[\uD800-\uDBFF]/.test(value[MAX_VALUE_LENGTH - 1]!) ? MAX_VALUE_LENGTH - 1 : MAX_VALUE_LENGTH;
  return value.slice(0, end);
}
