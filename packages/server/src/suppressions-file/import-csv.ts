import { createReadStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { parse, type CsvError, type Options } from 'csv-parse';
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
  const { delimiter, start = 0, firstLine = 1, maxRecordBytes = 1 << 20 } = readOptions;
  let records: SourceRecord[] = [];
  // csv-parse reports where a record ends, not where it starts: lines are counted from the raw text of
  // each record, which also holds the line breaks of the blank lines skipped before it.
  let nextLine = firstLine;
  let lastEnd = start;
  let fed = start;

  // With `raw` and `info`, csv-parse hands `on_record` the record with its raw text; the types do not say so.
  type RawRecord = { record: string[]; raw: string };
  const options: Options = {
    bom: start === 0,
    delimiter,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    raw: true,
    info: true,
    on_record: (parsed, { bytes }) => {
      const { record, raw } = parsed as unknown as RawRecord;
      const line = nextLine + leadingBreaks(raw);
      nextLine += lineBreaks(raw);
      records.push({ line, end: start + bytes, nextLine, text: withoutBreaks(raw), fields: record });
      lastEnd = start + bytes;
      return null;
    },
    on_skip: (error: CsvError | undefined, raw: string | undefined) => {
      // With relaxed quotes and column counts, only a quote still open at the end of the file gets here.
      const text = raw ?? '';
      const line = nextLine + leadingBreaks(text);
      nextLine += lineBreaks(text);
      records.push({ line, end: -1, nextLine, text: withoutBreaks(text), error: describeCsvError(error) });
      return undefined;
    },
  };
  const parser = parse(options);
  parser.resume();
  const done = finished(parser);
  // Surfaced by awaiting `done`; without a listener an error would be unhandled in between.
  done.catch(() => {});

  for await (const chunk of createReadStream(path, { start }) as AsyncIterable<Buffer>) {
    // csv-parse handles a chunk synchronously: its records are in `records` when write returns.
    parser.write(chunk);
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
  parser.end();
  await done;
  if (records.length > 0) yield fixEnds(records, fed);
}

/** An unreadable record (only ever the file's last) ends with the file. */
function fixEnds(records: SourceRecord[], fed: number): SourceRecord[] {
  for (const record of records) if (record.end === -1) record.end = fed;
  return records;
}

const LINE_BREAK = /\r\n|\r|\n/g;

/** Line breaks in a record's raw text: its own, and the first character of the one that ends it. */
function lineBreaks(raw: string): number {
  return raw.match(LINE_BREAK)?.length ?? 0;
}

/** Blank lines skipped before a record show in its raw text as one break character each. */
function leadingBreaks(raw: string): number {
  let count = 0;
  while (raw[count] === '\r' || raw[count] === '\n') count++;
  return count;
}

function withoutBreaks(raw: string): string {
  return raw.replace(/^[\r\n]+/, '').replace(/[\r\n]+$/, '');
}

function describeCsvError(error: CsvError | undefined): string {
  if (error?.code === 'CSV_QUOTE_NOT_CLOSED') return 'a quoted field is not closed before the end of the file';
  return error?.message ?? 'unreadable CSV';
}
