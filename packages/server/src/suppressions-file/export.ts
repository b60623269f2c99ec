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
const CSV_HEADER = 'email,reason,created_at,hash\n';
const CSV_STREAM_HEADER = 'email,reason,created_at,hash,stream\n';

/**
 * Writes a project's suppressions (or a stream's: `stream`), newest first, as CSV (`email,reason,created_at,hash`, with a
 * header), JSON Lines, or the headerless `address,BOUNCE|COMPLAINT` CSV of an SES suppression list
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
  const line =
    format === 'csv'
      ? stream === undefined
        ? csvLine
        : (suppression: Suppression) => csvStreamLine(suppression, stream)
      : format === 'jsonl'
        ? stream === undefined
          ? jsonLine
          : (suppression: Suppression) => jsonStreamLine(suppression, stream)
        : (suppression: Suppression) => sesImportLine(suppression, manualAs);
  signal?.throwIfAborted();
  if (format === 'csv') await write(output, stream === undefined ? CSV_HEADER : CSV_STREAM_HEADER, signal);
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

/** One CSV row, `\n`-terminated. */
export function csvLine(suppression: Suppression): string {
  const { email, reason, created_at, hash } = suppression;
  return `${[email, reason, created_at, hash].map(csvField).join(',')}\n`;
}

/**
 * Quotes a field when it holds a comma, a quote or a line break, or starts or ends with white space
 * (which a reader may trim, or take for a blank line).
 */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** A row of a stream's list: our CSV row with the stream last. */
function csvStreamLine(suppression: Suppression, stream: string): string {
  const { email, reason, created_at, hash } = suppression;
  return `${[email, reason, created_at, hash, stream].map(csvField).join(',')}\n`;
}

function jsonLine({ email, reason, created_at, hash }: Suppression): string {
  return `${JSON.stringify({ email, reason, created_at, hash })}\n`;
}

function jsonStreamLine({ email, reason, created_at, hash }: Suppression, stream: string): string {
  return `${JSON.stringify({ email, reason, created_at, hash, stream })}\n`;
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
