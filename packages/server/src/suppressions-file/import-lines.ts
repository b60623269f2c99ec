import { createReadStream } from 'node:fs';
import type { SourceRecord } from './import-records.js';

/** One physical line of a file. */
export interface FileLine {
  /** 1-based physical line number. */
  number: number;
  /** Byte offset just past the line's `\n`: where the next line starts, so where a resume starts. */
  end: number;
  /** The line without `\n` or `\r\n`; undefined when it is longer than `maxLineBytes`. */
  text: string | undefined;
}

export interface ReadLinesOptions {
  /** Byte offset to start at; must be the start of a line. Default 0. */
  start?: number;
  /** Number of the line at `start`. Default 1. */
  firstLine?: number;
  /** Longer lines are reported with `text: undefined` instead of being buffered. Default 1 MiB. */
  maxLineBytes?: number;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Streams a file's lines in batches (one per chunk read), with the byte offset at which each ends.
 * Splits bytes, not decoded text, so the offsets are exact; memory is one chunk plus one line. A UTF-8
 * BOM at the start of the file is skipped.
 *
 * @example
 * for await (const batch of readLines('suppressions.csv')) {
 *   for (const line of batch) console.log(line.number, line.end, line.text);
 * }
 */
export async function* readLines(path: string, options: ReadLinesOptions = {}): AsyncGenerator<FileLine[]> {
  const { start = 0, firstLine = 1, maxLineBytes = 1 << 20 } = options;
  let number = firstLine;
  let chunkOffset = start;
  // The start of the current line, buffered across chunks until its `\n` arrives.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let tooLong = false;

  const take = (chunk: Buffer, from: number, to: number): string | undefined => {
    const length = pendingBytes + (to - from);
    const result =
      tooLong || length > maxLineBytes
        ? undefined
        : decodeLine(pending.length === 0 ? chunk.subarray(from, to) : Buffer.concat([...pending, chunk.subarray(from, to)]));
    pending = [];
    pendingBytes = 0;
    tooLong = false;
    return result;
  };

  for await (const chunk of createReadStream(path, { start }) as AsyncIterable<Buffer>) {
    let from = chunkOffset === 0 && hasBom(chunk) ? 3 : 0;
    const lines: FileLine[] = [];
    for (let index = chunk.indexOf(NEWLINE, from); index !== -1; index = chunk.indexOf(NEWLINE, from)) {
      lines.push({ number: number++, end: chunkOffset + index + 1, text: take(chunk, from, index) });
      from = index + 1;
    }
    if (from < chunk.length && !tooLong) {
      pending.push(chunk.subarray(from));
      pendingBytes += chunk.length - from;
      if (pendingBytes > maxLineBytes) {
        tooLong = true;
        pending = [];
      }
    }
    chunkOffset += chunk.length;
    if (lines.length > 0) yield lines;
  }
  // A last line without a trailing newline.
  if (pendingBytes > 0 || tooLong) yield [{ number, end: chunkOffset, text: take(Buffer.alloc(0), 0, 0) }];
}

function decodeLine(bytes: Buffer): string {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length;
  return bytes.toString('utf8', 0, end);
}

// A first chunk is at least 3 bytes unless the whole file is shorter, so a BOM is never split.
function hasBom(chunk: Buffer): boolean {
  return chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;
}

/**
 * JSON Lines as import records: one per non-blank line, parsed, with the byte offset after its line
 * break. A line that is not JSON, or longer than 1 MiB, is an unreadable record.
 *
 * @example
 * for await (const batch of readJsonLineRecords('export.jsonl')) {
 *   for (const record of batch) console.log(record.line, record.json ?? record.error);
 * }
 */
export async function* readJsonLineRecords(path: string, options: ReadLinesOptions = {}): AsyncGenerator<SourceRecord[]> {
  for await (const batch of readLines(path, options)) {
    const records: SourceRecord[] = [];
    for (const line of batch) {
      const base = { line: line.number, end: line.end, nextLine: line.number + 1 };
      if (line.text === undefined) {
        records.push({ ...base, text: '', error: 'line longer than 1 MiB' });
        continue;
      }
      if (line.text.trim() === '') continue;
      try {
        records.push({ ...base, text: line.text, json: JSON.parse(line.text) as unknown });
      } catch {
        records.push({ ...base, text: line.text, error: 'not valid JSON' });
      }
    }
    if (records.length > 0) yield records;
  }
}
