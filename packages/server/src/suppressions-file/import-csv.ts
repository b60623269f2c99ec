import { createReadStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { parse, type CsvError } from 'csv-parse';
import { ImportFileError, type SourceRecord } from './import-records.js';

export interface CsvReadOptions {
  /** `,`, `;` or a tab. */
  delimiter: string;
  /** Byte offset to start at: 0, or where an earlier record ended. Default 0. */
  start?: number;
  /** Number of the line at `start`. Default 1. */
  firstLine?: number;
  /** A record (quoted line breaks included) longer than this stops the import. Default 1 MiB. */
  maxRecordBytes?: number;
  /** Bytes read at a time. Default 64 KiB. */
  chunkBytes?: number;
}

/**
 * Streams a CSV file's records in batches (one per chunk read) with csv-parse: quoted fields across
 * lines, `""` escapes, a UTF-8 BOM, `\r\n`, blank lines, rows of any length. Each record carries the
 * byte offset where it ends (so where a resume starts) and the line it starts on.
 *
 * Quotes are read leniently (`a"b` and `"a"b` are kept as written, as csv-parse's `relax_quotes`
 * does), so a stray quote makes one odd field rather than swallowing the rest of the file. A quote
 * left open at the end of the file is one unreadable record. A record longer than `maxRecordBytes`
 * (a quote left open earlier, most likely) stops the import with an `ImportFileError` naming its line:
 * csv-parse cannot skip it and go on, and reading on would hold the rest of the file in memory.
 *
 * @example
 * for await (const batch of readCsvRecords('bounces.csv', { delimiter: ',' })) {
 *   for (const record of batch) console.log(record.line, record.end, record.fields);
 * }
 */
export async function* readCsvRecords(path: string, readOptions: CsvReadOptions): AsyncGenerator<SourceRecord[]> {
  const { delimiter, start = 0, firstLine = 1, maxRecordBytes = 1 << 20, chunkBytes = 1 << 16 } = readOptions;
  let records: SourceRecord[] = [];
  // csv-parse reports where a record ends, not where it starts: lines are counted from the raw text of
  // each record, which also holds the line breaks of the blank lines skipped before it.
  let nextLine = firstLine;
  let lastEnd = start;
  let fed = start;

  const parser = parse({
    bom: start === 0,
    delimiter,
    // All three, rather than the first one csv-parse meets: a run resumed after a line that ended
    // otherwise than the file's first would split records differently. They are the breaks lines are
    // counted by, too.
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    raw: true,
    on_skip: (error: CsvError | undefined, raw: string | undefined) => {
      // With relaxed quotes and column counts, only a quote still open at the end of the file gets here.
      const text = raw ?? '';
      const line = nextLine + leadingBreaks(text);
      nextLine += lineBreaks(text);
      records.push({ line, end: -1, nextLine, text: withoutBreaks(text), error: describeCsvError(error) });
      return undefined;
    },
  });
  // Records are taken as csv-parse emits them, while `write` parses the chunk, when its byte counter
  // is where this record ends. (Its `on_record` hook would give the same, but csv-parse builds a
  // context object for every record to call it, which cost as much as the parsing itself.)
  parser.on('data', ({ record, raw }: { record: string[]; raw: string }) => {
    const line = nextLine + leadingBreaks(raw);
    nextLine += lineBreaks(raw);
    lastEnd = start + parser.info.bytes;
    records.push({ line, end: lastEnd, nextLine, text: withoutBreaks(raw), fields: record });
  });
  const done = finished(parser);
  // Surfaced by awaiting `done`; without a listener an error would be unhandled in between.
  done.catch(() => {});

  for await (const chunk of createReadStream(path, { start, highWaterMark: chunkBytes }) as AsyncIterable<Buffer>) {
    parser.write(chunk);
    // A record emitted later, out of the stream's buffer, would get a later offset: none may wait there.
    if (parser.readableLength > 0) throw new Error('csv-parse held records back, so their byte offsets are unknown.');
    fed += chunk.length;
    if (fed - lastEnd > maxRecordBytes + chunk.length) {
      parser.destroy();
      throw new ImportFileError(
        `Line ${nextLine}: a record runs over ${maxRecordBytes} bytes, most likely a quote that is never closed. Fix the file and import it again.`,
      );
    }
    if (records.length > 0) {
      yield fixEnds(records, fed);
      records = [];
    }
  }
  // What is left to parse is the file's last record, which ends where the file does.
  parser.end();
  await done;
  if (records.length > 0) yield fixEnds(records, fed);
}

/** An unreadable record (only ever the file's last) ends with the file. */
function fixEnds(records: SourceRecord[], fed: number): SourceRecord[] {
  for (const record of records) if (record.end === -1) record.end = fed;
  return records;
}

const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;

/** Line breaks (`\r\n`, `\r`, `\n`) in a record's raw text: its own, and the first character of the one that ends it. */
function lineBreaks(raw: string): number {
  let count = 0;
  for (let i = raw.indexOf('\n'); i !== -1; i = raw.indexOf('\n', i + 1)) count++;
  // A `\r` is a break of its own unless a `\n` follows it (then the two are one, counted above).
  for (let i = raw.indexOf('\r'); i !== -1; i = raw.indexOf('\r', i + 1)) if (raw.charCodeAt(i + 1) !== LINE_FEED) count++;
  return count;
}

/** Blank lines skipped before a record show in its raw text as one break character each. */
function leadingBreaks(raw: string): number {
  let count = 0;
  while (isBreak(raw.charCodeAt(count))) count++;
  return count;
}

function withoutBreaks(raw: string): string {
  let from = 0;
  let to = raw.length;
  while (from < to && isBreak(raw.charCodeAt(from))) from++;
  while (to > from && isBreak(raw.charCodeAt(to - 1))) to--;
  return from === 0 && to === raw.length ? raw : raw.slice(from, to);
}

function isBreak(code: number): boolean {
  return code === LINE_FEED || code === CARRIAGE_RETURN;
}

function describeCsvError(error: CsvError | undefined): string {
  if (error?.code === 'CSV_QUOTE_NOT_CLOSED') return 'a quoted field is not closed before the end of the file';
  return error?.message ?? 'unreadable CSV';
}
