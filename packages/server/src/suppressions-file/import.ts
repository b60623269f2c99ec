import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  assertStreamName,
  MAX_BULK_SIZE,
  tryNormalizeEmail,
  type BulkAddItem,
  type BulkAddResult,
  type SuppressionReason,
} from '@mailwarden/core';
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
import { groupedFormats, planImport, projectWideFormats, type ImportFormat, type ImportPlan, type ImportRow } from './import-formats.js';
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
  /**
   * The stream every row goes to. Default: the stream the file names for a row (our export of a stream,
   * a provider's group through `groupStreams`), else the project-wide list. Refused for the formats that
   * list only bounces and complaints (`projectWideFormats`).
   */
  stream?: string;
  /**
   * The stream of each provider group an unsubscribe is scoped to (SendGrid's `group_id`, a Mailgun tag
   * other than `*`), when `stream` is not given. A group the file has and this does not map stops the
   * import before anything is written.
   */
  groupStreams?: Readonly<Record<string, string>>;
  /** Where the import goes, for the checkpoint: a checkpoint of another store is not resumed. Default `store`. */
  targetName?: string;
  /** Where to keep the resume checkpoint, or false for none. Default `${file}.mailwarden-import.json`. */
  checkpoint?: string | false;
  /** Where to list rows that were not imported, or false for nowhere. Default `${file}.rejects.csv`. */
  rejects?: string | false;
  /** Ignore an existing checkpoint and start from the first record. */
  restart?: boolean;
  /** Who the adds are in the audit trail (`import:<run>` from the CLI); absent: no actor. */
  actor?: string;
  /**
   * The clock a row's `expires_at` is compared with: a row expired by it is skipped (counted as
   * `skipped`, listed in the rejects file). Default `Date.now`; give the service's own clock if it has one.
   */
  now?: () => number;
  /** Items per bulk add, at most (and by default) 1 000. */
  batchSize?: number;
  /** Called once the format is decided, before the first row is read. */
  onStart?: (start: { format: ImportFormat; detectedBy: string; resumedFromLine?: number }) => void;
  /** Called after every batch, with totals that cover only finished rows. */
  onProgress?: (progress: ImportProgress) => void;
  /** Stops the import: the batches in flight finish, the checkpoint is written, and the promise rejects with the reason. */
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
const MAX_IN_FLIGHT = 2;
/** Batches read and checked ahead of the sends, so a check never waits behind an add. */
const READ_AHEAD = 2;
const MAX_INVALID_ENTRIES = 100;
const MAX_VALUE_LENGTH = 200;
const RANKS: Record<SuppressionReason, number> = { manual: 1, hard_bounce: 2, complaint: 3 };

type ImportSource = 'import' | 'unsubscribe';

/** The list an add row goes to: the stream it names, else none (project-wide). */
type ListOf = (row: Extract<ImportRow, { kind: 'add' }>) => string | undefined;

/** One address to send, and where it came from. */
interface BatchItem {
  item: BulkAddItem;
  /** The list it goes to: a stream, or undefined for the project-wide list. */
  stream: string | undefined;
  /** `unsubscribe` for a recipient's unsubscribe, `import` otherwise. */
  source: ImportSource;
  /** The normalized address. */
  email: string;
  /** The list and the normalized address: what the store keys it by. */
  key: string;
  rank: number;
  line: number;
  value: string;
  /** Its place among the batch's records, which orders the rejects file. */
  order: number;
}

/** A batch sent to the store, until it is counted. */
interface Flight {
  batch: Batch;
  keys: ReadonlySet<string>;
  /** How strongly each item's address was suppressed just before it (kept when there is a checkpoint). */
  before: number[] | undefined;
  /** Sent again by a resumed run: `before` is what the first send found. */
  resent: boolean;
  sent: Promise<{ results: BulkAddResult[] }>;
  /** The store's answer, once it came. */
  results?: BulkAddResult[];
}

/** The batch read ahead of the sends: its addresses and, if it was checked, the check. */
interface Ahead {
  batch: Batch;
  keys: ReadonlySet<string>;
  /** From the checkpoint, for a batch sent again. */
  before?: number[];
  checking?: Promise<Map<string, number>>;
  /** The batches unanswered when the check was sent, or sent after it: it may have missed what they did. */
  missed: Flight[];
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
 * SendGrid, Postmark, Mailgun), keeping each row's reason and time and recording `source: import`
 * (an unsubscribe: `manual` with `source: unsubscribe`), each row into its list: `stream`, else the
 * stream the file names for it, else the project-wide list (docs/server.md, "Streams and unsubscribes").
 * Streams the file in constant memory and sends up to 1 000 addresses per bulk add, two batches in
 * flight while the next is read and checked. Rows that cannot be imported are counted and listed in a
 * rejects file; any other error (such as `store_unavailable`) stops the import and is rethrown.
 *
 * Resumable, with exact counts: before each batch is sent, a checkpoint records where the rows counted
 * so far end, their counts, and for each batch in flight how strongly each of its addresses was
 * suppressed just before it. A rerun on the same unchanged file, project and store sends those
 * batches again and counts what their first send did from those, so a crash at any point (SIGKILL
 * included) ends in the same summary as an uninterrupted run. The checkpoint is deleted after a
 * complete run.
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
  const stream = options.stream === undefined ? undefined : assertStreamName(options.stream);
  const groupStreams = new Map(Object.entries(options.groupStreams ?? {}).map(([group, name]) => [group, assertStreamName(name)]));
  if (stream !== undefined && projectWideFormats.includes(plan.format)) {
    throw new ImportFileError(
      `A ${plan.format} file lists bounces and complaints: they say an address takes no mail at all, so they are project-wide (as a bounce event is). Import it without --stream.`,
    );
  }
  if (stream === undefined && groupedFormats.includes(plan.format)) await checkGroupsMapped(plan, file, groupStreams);
  const listOf: ListOf = (row) => stream ?? (row.group === undefined ? row.stream : groupStreams.get(row.group));
  const identity = {
    file,
    size,
    mtimeMs,
    projectId,
    target: options.targetName ?? 'store',
    format: plan.format,
    // Another list is another import: a checkpoint of one is not resumed into the other.
    ...(stream === undefined ? {} : { stream }),
    ...(groupStreams.size === 0 ? {} : { groupStreams: JSON.stringify([...groupStreams].sort()) }),
  };
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

  const progress = (): ImportProgress => ({ bytesRead: done.byteOffset, totalBytes: size, rows: done.rows, ...done.counts });

  // A resumed run first sends the batches that were in flight again, with what their addresses were before them.
  const resent = (resumed?.inFlight ?? []).map(({ before }) => [...before].map(Number));
  const batches = readBatches(plan, file, done, batchSize, resumed?.inFlight.map(({ end }) => end) ?? [], listOf, options.now ?? Date.now);
  /** Sent and not yet counted, in file order. */
  const inFlight: Flight[] = [];
  /** The checkpoint now, with a batch about to be sent. */
  const checkpointOf = (sending?: Pick<Flight, 'batch' | 'before'>): ImportCheckpoint => ({
    version: 3,
    ...identity,
    done,
    inFlight: [...inFlight, ...(sending === undefined ? [] : [sending])].map(({ batch, before }) => ({
      end: batch.end,
      before: before!.join(''),
    })),
  });

  /** Reads the next batch and checks its addresses (unless it is sent again, or nothing is resumable). */
  const readAhead = async (): Promise<Ahead | undefined> => {
    const next = await batches.next();
    if (next.done === true) return undefined;
    const batch = next.value;
    const ahead: Ahead = { batch, keys: new Set(batch.items.map((item) => item.key)), missed: [] };
    const before = resent.shift();
    if (before !== undefined) {
      if (before.length !== batch.items.length) {
        throw new ImportFileError('The checkpoint does not match the file (was it edited in place?). Import again with --restart.');
      }
      ahead.before = before;
    } else if (checkpointPath !== undefined && batch.items.length > 0) {
      // What the check may miss: the adds not answered yet when it is sent (and those sent after it).
      ahead.missed = inFlight.filter((flight) => flight.results === undefined);
      ahead.checking = checkStates(target, projectId, batch.items);
      ahead.checking.catch(() => {});
    }
    return ahead;
  };

  /** Sends a batch read ahead, once the checkpoint says what its addresses were before it. */
  const send = async ({ batch, keys, before: resentBefore, checking, missed }: Ahead): Promise<Flight> => {
    let before = resentBefore;
    if (checking !== undefined) before = statesBefore(batch.items, await checking, missed);
    else if (before === undefined && checkpointPath !== undefined) before = []; // no items: nothing to check
    const sending = { batch, keys, before, resent: resentBefore !== undefined };
    if (checkpointPath !== undefined && batch.items.length > 0) await writeCheckpoint(checkpointPath, checkpointOf(sending));
    const flight: Flight = {
      ...sending,
      sent: addBatch(target, projectId, batch.items, options.actor),
    };
    inFlight.push(flight);
    flight.sent.then(
      ({ results }) => (flight.results = results),
      () => {},
    );
    return flight;
  };

  /** Counts the answered batches at the head of the flight, in file order. */
  const countAnswered = async () => {
    while (inFlight[0]?.results !== undefined) {
      const { batch, results, before, resent: wasResent } = inFlight.shift()!;
      await count(batch, results!, wasResent ? before : undefined, done, rejects);
      onProgress?.(progress());
    }
  };

  // Up to two adds in flight, so the store always has the next batch while the last one is counted,
  // and the two batches after them read and checked meanwhile (checked before those adds are sent, so
  // the store never has a check queued behind an add when the next send needs it). Two batches in
  // flight at once never share an address: a batch waits for every earlier one that has an address of
  // its own to be answered first. What each address was before a batch is its check, joined with what
  // every add the check may have missed did (answered by the time the batch is sent, or sharing no
  // address with it); the join (the stronger reason) does not care whether the check saw those adds.
  const aheads: Ahead[] = [];
  let ended = false;
  try {
    for (;;) {
      await countAnswered();
      if (signal?.aborted === true) aheads.length = 0;
      const next = aheads[0];
      const free =
        next !== undefined &&
        inFlight.length < MAX_IN_FLIGHT &&
        !inFlight.some((flight) => flight.results === undefined && sharesAddress(flight.keys, next.keys));
      if (free) {
        aheads.shift();
        const flight = await send(next);
        for (const ahead of aheads) if (ahead.checking !== undefined) ahead.missed.push(flight);
      } else if (!ended && signal?.aborted !== true && aheads.length < READ_AHEAD) {
        const ahead = await readAhead();
        if (ahead === undefined) ended = true;
        else aheads.push(ahead);
      } else if (inFlight.length > 0) {
        // After counting, the first is unanswered: whatever holds the next batch back ends with it.
        await inFlight[0]!.sent;
      } else break;
    }
  } catch (error) {
    // Let the adds in flight finish, so their rows are counted as the store has them; a batch whose
    // answer never came (and every one after it) stays in flight in the checkpoint, to be sent again.
    await Promise.allSettled(inFlight.map((flight) => flight.sent));
    const counted = await countAnswered().then(
      () => true,
      () => false,
    );
    // Nothing done, nothing to resume (a file that is not its format fails before its first row).
    if (counted && checkpointPath !== undefined && (done.byteOffset > 0 || inFlight.length > 0))
      await writeCheckpoint(checkpointPath, checkpointOf()).catch(() => {});
    await rejects?.close().catch(() => {});
    await batches.return(undefined).catch(() => {});
    throw error;
  }
  await rejects?.close();

  if (signal?.aborted === true) {
    if (checkpointPath !== undefined) await writeCheckpoint(checkpointPath, checkpointOf());
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
 * records). The first batches of a resumed run end where the batches that were in flight ended
 * (`cuts`), so the same items are sent again.
 */
async function* readBatches(
  plan: ImportPlan,
  file: string,
  done: ImportPosition,
  batchSize: number,
  cuts: number[],
  listOf: ListOf,
  now: () => number,
): AsyncGenerator<Batch> {
  const source = readRecords(plan, file, { start: done.byteOffset, firstLine: done.nextLine });
  let first = done.byteOffset === 0;
  const ends = [...cuts];
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
        const { email, reason, createdAt, expiresAt } = row;
        if (expiresAt !== undefined && Date.parse(expiresAt) <= now()) {
          // It would no longer suppress: an import does not bring back what has expired.
          batch.local.push({ kind: 'skipped', line: record.line, value: email, reason: `expired at ${expiresAt}`, order });
        } else if (normalized.ok) {
          const item: BulkAddItem = createdAt === undefined ? { email, reason } : { email, reason, created_at: createdAt };
          if (expiresAt !== undefined) item.expires_at = expiresAt;
          const stream = listOf(row);
          batch.items.push({
            item,
            stream,
            source: row.unsubscribe === true ? 'unsubscribe' : 'import',
            email: normalized.email,
            key: listKey(stream, normalized.email),
            rank: RANKS[row.reason],
            line: record.line,
            value: record.text,
            order,
          });
        } else batch.local.push({ kind: 'invalid', line: record.line, value: row.email, reason: normalized.reason, order });
      } else if (row.kind === 'invalid' || row.kind === 'skip') {
        batch.rows++;
        batch.local.push({
          kind: row.kind === 'skip' ? 'skipped' : 'invalid',
          line: record.line,
          value: row.value,
          reason: row.why,
          order,
        });
      }
      const full = ends.length === 0 ? batch.items.length >= batchSize || records >= MAX_RECORDS_PER_BATCH : batch.end >= ends[0]!;
      if (full) {
        yield batch;
        ends.shift();
        records = 0;
        batchStart = batch.end;
        batch = { end: batch.end, nextLine: batch.nextLine, rows: 0, items: [], local: [] };
      }
    }
  }
  if (batch.end > batchStart) yield batch;
}

/** The records of the file from `from` on, as its container holds them. */
function readRecords(plan: ImportPlan, file: string, from: { start: number; firstLine: number }): AsyncGenerator<SourceRecord[]> {
  return plan.container === 'csv'
    ? readCsvRecords(file, { ...from, delimiter: plan.delimiter })
    : plan.container === 'jsonl'
      ? readJsonLineRecords(file, from)
      : readJsonArrayRecords(file, { ...from, arrayKey: plan.arrayKey });
}

/**
 * Reads the whole file once and stops the import, before anything is written, when it has unsubscribes
 * scoped to a provider group that `groupStreams` does not map: dropping them, or widening them to the
 * project-wide list, would each be wrong without a word.
 */
async function checkGroupsMapped(plan: ImportPlan, file: string, groupStreams: ReadonlyMap<string, string>): Promise<void> {
  const unmapped = new Set<string>();
  let first = true;
  for await (const chunk of readRecords(plan, file, { start: 0, firstLine: 1 })) {
    for (const record of chunk) {
      const row = plan.interpret(record, first);
      first = false;
      if (row.kind === 'add' && row.group !== undefined && !groupStreams.has(row.group)) unmapped.add(row.group);
    }
  }
  if (unmapped.size === 0) return;
  const groups = [...unmapped].sort();
  const what = plan.format === 'mailgun-unsubscribes' ? 'tag' : 'unsubscribe group';
  throw new ImportFileError(
    `The file has unsubscribes from the ${what}${groups.length === 1 ? '' : 's'} ${groups.slice(0, 20).join(', ')}${groups.length > 20 ? ', …' : ''}, ` +
      `which no stream is given for: map each with --group-stream <${what === 'tag' ? 'tag' : 'group ID'}>=<stream>, or import them all into one stream with --stream. Nothing was imported.`,
  );
}

/** An address in a list: the stream (empty for the project-wide list) and the normalized address. */
function listKey(stream: string | undefined, email: string): string {
  return `${stream ?? ''} ${email}`;
}

/**
 * The items of a batch in one bulk add per list and source (one, usually: a file's rows mostly go to
 * one list from one source), the results put back in the items' order. An address must meet the store
 * in file order, as the counts assume: where it comes again from the other source, the items from it on
 * wait for the adds before them (a wave each).
 */
async function addBatch(
  target: SuppressionTarget,
  projectId: string,
  items: readonly BatchItem[],
  actor: string | undefined,
): Promise<{ results: BulkAddResult[] }> {
  const results: BulkAddResult[] = new Array(items.length);
  const waves: BatchItem[][] = [[]];
  const sources = new Map<string, ImportSource>();
  for (const item of items) {
    const seen = sources.get(item.key);
    if (seen !== undefined && seen !== item.source) {
      waves.push([]);
      sources.clear();
    }
    sources.set(item.key, item.source);
    waves.at(-1)!.push(item);
  }
  const indexOf = new Map(items.map((item, i) => [item, i]));
  for (const wave of waves) {
    await Promise.all(
      [...groupBy(wave, (item) => `${item.source} ${item.stream ?? ''}`).values()].map(async (indexes) => {
        const { stream, source } = wave[indexes[0]!]!;
        const answer = await target.addMany(
          projectId,
          indexes.map((i) => wave[i]!.item),
          { source, ...(stream === undefined ? {} : { stream }), ...(actor === undefined ? {} : { actor }) },
        );
        if (answer.results.length !== indexes.length) {
          throw new Error(`The store answered ${answer.results.length} results for ${indexes.length} items.`);
        }
        answer.results.forEach((result, j) => (results[indexOf.get(wave[indexes[j]!]!)!] = result));
      }),
    );
  }
  return { results };
}

/** The indexes of `items`, by a key, in order. */
function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  items.forEach((item, i) => {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [i]);
    else group.push(i);
  });
  return groups;
}

/**
 * How strongly each address of a batch is suppressed now in the list it goes to (0: not at all), keyed
 * by `listKey`: one bulk check per list. A check with a stream answers with the project-wide entry when
 * there is one (docs/storage.md, the check rule), which says nothing of the stream's own: each such
 * address is then looked up in the stream's list (`streamStates`).
 */
async function checkStates(target: SuppressionTarget, projectId: string, items: readonly BatchItem[]): Promise<Map<string, number>> {
  const states = new Map<string, number>();
  const unique = [...new Map(items.map((item) => [item.key, item])).values()];
  await Promise.all(
    [...groupBy(unique, (item) => item.stream ?? '').values()].map(async (indexes) => {
      const stream = unique[indexes[0]!]!.stream;
      const emails = indexes.map((i) => unique[i]!.email);
      const { results } = await (stream === undefined
        ? target.checkMany(projectId, emails)
        : target.checkMany(projectId, emails, { stream }));
      const hidden: string[] = [];
      results.forEach((result, j) => {
        const key = unique[indexes[j]!]!.key;
        if (!result.suppressed) states.set(key, 0);
        else if (stream === undefined || result.stream === stream) states.set(key, RANKS[result.reason]);
        else hidden.push(emails[j]!);
      });
      if (stream !== undefined && hidden.length > 0) {
        for (const [email, rank] of await streamStates(target, projectId, stream, hidden)) states.set(listKey(stream, email), rank);
      }
    }),
  );
  return states;
}

const LOOKUPS_AT_ONCE = 8;

/**
 * How strongly a stream's list holds each of these addresses: a listing of the stream filtered to the
 * address as a prefix (an index range on every store), paged until the address or the end. Only for
 * addresses the project-wide list holds too, so an import into a stream pays for it only where the
 * lists overlap.
 */
async function streamStates(
  target: SuppressionTarget,
  projectId: string,
  stream: string,
  emails: readonly string[],
): Promise<Map<string, number>> {
  const states = new Map<string, number>();
  for (let from = 0; from < emails.length; from += LOOKUPS_AT_ONCE) {
    await Promise.all(
      emails.slice(from, from + LOOKUPS_AT_ONCE).map(async (email) => {
        let cursor: string | null = null;
        let rank = 0;
        do {
          const query = { stream, emailPrefix: email, limit: 100 };
          const page = await target.list(projectId, cursor === null ? query : { ...query, cursor });
          const found = page.items.find((item) => item.email === email);
          if (found !== undefined) {
            rank = RANKS[found.reason];
            break;
          }
          cursor = page.next_cursor;
        } while (cursor !== null);
        states.set(email, rank);
      }),
    );
  }
  return states;
}

function sharesAddress(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const key of a) if (b.has(key)) return true;
  return false;
}

/**
 * For each item, how strongly its address is suppressed just before it is added: the checked state,
 * joined with what the adds the check may have missed did (each item the store took leaves its address
 * at least as strong as its reason), then the batch's own earlier items.
 */
function statesBefore(items: readonly BatchItem[], checked: Map<string, number>, missed: readonly Flight[]): number[] {
  const states = new Map(checked);
  for (const { batch, results } of missed) {
    // Not answered yet, so it has none of these addresses (the batch would have waited for it).
    if (results === undefined) continue;
    results.forEach((result, i) => {
      if (result.status === 'invalid') return;
      const { key, rank } = batch.items[i]!;
      const state = states.get(key);
      if (state !== undefined && rank > state) states.set(key, rank);
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
async function count(
  batch: Batch,
  results: BulkAddResult[],
  before: number[] | undefined,
  done: ImportPosition,
  rejects: RejectsFile | undefined,
): Promise<void> {
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
      if (invalidEntries.length < MAX_INVALID_ENTRIES)
        invalidEntries.push({ line: row.line, value: truncate(row.value), reason: row.reason });
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
