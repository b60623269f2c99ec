import { MailwardenError, type Suppression } from '@mailwarden/core';
import type { SuppressionTarget } from './target.js';

/** `csv` and `jsonl` are ours; `ses-import` is the CSV an SES suppression list import job takes. */
export const exportFormats = ['csv', 'jsonl', 'ses-import'] as const;
export type ExportFormat = (typeof exportFormats)[number];

export interface ExportOptions {
  projectId: string;
  format: ExportFormat;
  /**
   * The stream whose list to write (`csv` and `jsonl`): every row then says it, in a `stream` column or
   * key. Default: the project-wide list, in the columns it always had.
   */
  stream?: string;
  /**
   * `ses-import` only: SES has no reason for a suppression made by hand, so `manual` ones are left out
   * (and counted as `skipped`) unless they are to be written with this reason.
   */
  manualAs?: 'BOUNCE' | 'COMPLAINT';
  /** Where the rows go. It stays the caller's: it is not ended. */
  output: NodeJS.WritableStream;
  /** Called after each page with the number of rows written so far. */
  onProgress?: (exported: number) => void;
  signal?: AbortSignal;
}

const PAGE_SIZE = 100;
const CSV_COLUMNS = ['email', 'reason', 'created_at', 'hash'] as const;

/**
 * Writes a project's suppressions (or a stream's: `stream`), newest first, as CSV (`email,reason,created_at,hash`, with a
 * header; `stream` after them for a stream's list; `expires_at` last when some suppression expires), JSON Lines
 * (`expires_at` in the rows that have one), or the headerless `address,BOUNCE|COMPLAINT` CSV of an SES suppression list
 * import job (`hard_bounce` is BOUNCE, `complaint` COMPLAINT, `manual` see `manualAs`), one page at a
 * time and waiting for `output` to drain, so memory stays constant. `importSuppressions` reads each
 * back; ours with their reasons and times.
 *
 * @example
 * import { createWriteStream } from 'node:fs';
 *
 * const output = createWriteStream('suppressions.csv');
 * const { exported } = await exportSuppressions(mailwarden, { projectId: 'acme', format: 'csv', output });
 * output.end();
 */
export async function exportSuppressions(
  service: { suppressions: Pick<SuppressionTarget, 'list'> },
  options: ExportOptions,
): Promise<{ exported: number; skipped: number }> {
  const { projectId, format, output, onProgress, signal, manualAs, stream } = options;
  if (stream !== undefined && format === 'ses-import') {
    throw new MailwardenError(
      'invalid_request',
      "An SES suppression list is the account's, for every mail: export a stream as csv or jsonl (SES's own unsubscribes are per topic).",
    );
  }
  signal?.throwIfAborted();
  // A column only when some suppression expires, so exports of lists without expiry stay as they were.
  const expiryColumn =
    format === 'csv' &&
    (await service.suppressions.list(projectId, { limit: 1, expiring: true, ...(stream === undefined ? {} : { stream }) })).items.length >
      0;
  const line =
    format === 'csv'
      ? (suppression: Suppression) => csvLine(suppression, stream, expiryColumn)
      : format === 'jsonl'
        ? (suppression: Suppression) => jsonLine(suppression, stream)
        : (suppression: Suppression) => sesImportLine(suppression, manualAs);
  if (format === 'csv') {
    const header = [...CSV_COLUMNS, ...(stream === undefined ? [] : ['stream']), ...(expiryColumn ? ['expires_at'] : [])];
    await write(output, `${header.join(',')}\n`, signal);
  }
  let exported = 0;
  let skipped = 0;
  let cursor: string | null = null;
  do {
    signal?.throwIfAborted();
    const query = stream === undefined ? { limit: PAGE_SIZE } : { limit: PAGE_SIZE, stream };
    const page = await service.suppressions.list(projectId, cursor === null ? query : { ...query, cursor });
    const lines = page.items.map(line);
    const written = lines.filter((text) => text !== '');
    if (written.length > 0) await write(output, written.join(''), signal);
    exported += written.length;
    skipped += lines.length - written.length;
    if (page.items.length > 0) onProgress?.(exported);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return { exported, skipped };
}

/** One row of an SES import job's CSV, or '' for a `manual` suppression without `manualAs`. */
function sesImportLine({ email, reason }: Suppression, manualAs: 'BOUNCE' | 'COMPLAINT' | undefined): string {
  const ses = reason === 'hard_bounce' ? 'BOUNCE' : reason === 'complaint' ? 'COMPLAINT' : manualAs;
  return ses === undefined ? '' : `${csvField(email)},${ses}\n`;
}

/**
 * One CSV row, `\n`-terminated: a stream's list says its stream, and `expires_at` is a column when the
 * export has one (empty for a suppression that does not expire).
 */
export function csvLine(suppression: Suppression, stream?: string, expiryColumn = false): string {
  const { email, reason, created_at, hash, expires_at } = suppression;
  if (expires_at !== undefined && !expiryColumn) {
    // Only when one expiring was added while the export ran: its expiry is not lost without a word.
    throw new MailwardenError('invalid_request', 'A suppression that expires was added during the export: export again.');
  }
  const fields = [email, reason, created_at, hash, ...(stream === undefined ? [] : [stream]), ...(expiryColumn ? [expires_at ?? ''] : [])];
  return `${fields.map(csvField).join(',')}\n`;
}

/**
 * Quotes a field when it holds a comma, a quote or a line break, or starts or ends with white space
 * (which a reader may trim, or take for a blank line).
 */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One JSON Lines row: `stream` for a stream's list, `expires_at` when it has one. */
function jsonLine({ email, reason, created_at, hash, expires_at }: Suppression, stream: string | undefined): string {
  return `${JSON.stringify({ email, reason, created_at, hash, ...(stream === undefined ? {} : { stream }), ...(expires_at === undefined ? {} : { expires_at }) })}\n`;
}

/** Writes, and when the stream's buffer is full waits for 'drain' (or fails on 'error', 'close' or abort). */
async function write(output: NodeJS.WritableStream, text: string, signal: AbortSignal | undefined): Promise<void> {
  if (output.write(text)) return;
  const { destroyed, errored } = output as { destroyed?: boolean; errored?: Error | null };
  // An output that already failed emits no more 'drain', 'error' or 'close'.
  if (destroyed === true) throw errored ?? new Error('The export output is closed.');
  await new Promise<void>((resolve, reject) => {
    const settle = (error?: unknown) => {
      output.off('drain', onDrain);
      output.off('error', onError);
      output.off('close', onClose);
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onDrain = () => settle();
    const onError = (error: unknown) => settle(error);
    const onClose = () => settle(new Error('The export output closed before every row was written.'));
    const onAbort = () => settle(signal?.reason);
    output.on('drain', onDrain);
    output.on('error', onError);
    output.on('close', onClose);
    signal?.addEventListener('abort', onAbort);
  });
}
