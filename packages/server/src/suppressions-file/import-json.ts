import { createReadStream } from 'node:fs';
import { ImportFileError, type SourceRecord } from './import-records.js';

export interface JsonArrayReadOptions {
  /** The top-level key whose array holds the records: `SuppressedDestinationSummaries`, `Suppressions`. */
  arrayKey: string;
  /** 0, or where an earlier element ended (then the reader starts inside the array). Default 0. */
  start?: number;
  /** Number of the line at `start`. Default 1. */
  firstLine?: number;
  /** A longer element stops the import. Default 1 MiB. */
  maxRecordBytes?: number;
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const NEWLINE = 0x0a;

/**
 * Streams the elements of one array of a JSON document (`{ "Suppressions": [ {…}, {…} ] }`, as
 * `aws sesv2 list-suppressed-destinations` and Postmark's suppression dump write them) in batches, each
 * parsed with `JSON.parse`, with the byte offset where it ends and the line it starts on. Memory is one
 * chunk plus one element, whatever the file's size: the document is never parsed whole. Anything else
 * in the document (`NextToken`) is skipped. This only finds where elements begin and end (brackets
 * outside strings); `JSON.parse` does the parsing.
 *
 * @example
 * for await (const batch of readJsonArrayRecords('ses.json', { arrayKey: 'SuppressedDestinationSummaries' })) {
 *   for (const record of batch) console.log(record.line, record.json);
 * }
 */
export async function* readJsonArrayRecords(path: string, options: JsonArrayReadOptions): AsyncGenerator<SourceRecord[]> {
  const { arrayKey, start = 0, firstLine = 1, maxRecordBytes = 1 << 20 } = options;
  let line = firstLine;
  let offset = start;
  // Structure outside the array: depth 1 is the top-level object.
  let depth = start === 0 ? 0 : 2;
  let inArray = start !== 0;
  let arrayDone = false;
  let inString = false;
  let escaped = false;
  let expectKey = false;
  let key: number[] | undefined;
  let lastKey = '';
  let sawDocument = start !== 0;
  // The element being read.
  let element: { parts: Buffer[]; bytes: number; line: number; depth: number; scalar: boolean } | undefined;
  let bom = start === 0;

  const finishElement = (chunk: Buffer, from: number, to: number, records: SourceRecord[]) => {
    const current = element!;
    current.parts.push(chunk.subarray(from, to));
    const text = Buffer.concat(current.parts).toString('utf8');
    let json: unknown;
    let error: string | undefined;
    try {
      json = JSON.parse(text);
    } catch {
      error = 'not valid JSON';
    }
    records.push({ line: current.line, end: offset + to, nextLine: line, text, ...(error === undefined ? { json } : { error }) });
    element = undefined;
  };

  for await (const chunk of createReadStream(path, { start }) as AsyncIterable<Buffer>) {
    const records: SourceRecord[] = [];
    let i = 0;
    if (bom) {
      bom = false;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    }
    let elementFrom = element === undefined ? -1 : 0;
    for (; i < chunk.length && !arrayDone; i++) {
      const byte = chunk[i]!;
      if (byte === NEWLINE) line++;
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) {
          inString = false;
          if (key !== undefined) {
            lastKey = Buffer.from(key).toString('utf8');
            key = undefined;
          }
          if (element?.scalar === true && depth === 2) finishElement(chunk, elementFrom, i + 1, records);
        } else if (key !== undefined) key.push(byte);
        continue;
      }
      if (isWhitespace(byte)) {
        if (element?.scalar === true && depth === 2) finishElement(chunk, elementFrom, i, records);
        continue;
      }
      if (inArray && depth === 2 && element === undefined) {
        if (byte === COMMA) continue;
        if (byte === CLOSE_ARRAY) {
          arrayDone = true;
          continue;
        }
        element = { parts: [], bytes: 0, line, depth: 2, scalar: byte !== OPEN_OBJECT && byte !== OPEN_ARRAY };
        elementFrom = i;
        if (byte === QUOTE) inString = true;
        else if (!element.scalar) depth++;
        continue;
      }
      if (element?.scalar === true && depth === 2 && (byte === COMMA || byte === CLOSE_ARRAY)) {
        finishElement(chunk, elementFrom, i, records);
        if (byte === CLOSE_ARRAY) arrayDone = true;
        continue;
      }
      if (byte === QUOTE) {
        inString = true;
        if (depth === 1 && expectKey) {
          key = [];
          expectKey = false;
        }
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (depth === 0) {
          if (byte !== OPEN_OBJECT) throw new ImportFileError(`The file is a JSON array, not an object with "${arrayKey}".`);
          sawDocument = true;
          expectKey = true;
        }
        if (depth === 1 && byte === OPEN_ARRAY && lastKey === arrayKey) inArray = true;
        depth++;
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        depth--;
        if (element !== undefined && depth === 2) finishElement(chunk, elementFrom, i + 1, records);
        if (depth === 0) break;
      } else if (byte === COMMA && depth === 1) {
        expectKey = true;
      } else if (depth === 0) {
        throw new ImportFileError(`The file is not a JSON object with "${arrayKey}".`);
      }
    }
    if (element !== undefined) {
      const rest = chunk.subarray(elementFrom);
      element.parts.push(rest);
      element.bytes += rest.length;
      if (element.bytes > maxRecordBytes) {
        throw new ImportFileError(`Line ${element.line}: an element of "${arrayKey}" is longer than ${maxRecordBytes} bytes.`);
      }
    }
    offset += chunk.length;
    if (records.length > 0) yield records;
    if (arrayDone || (depth === 0 && sawDocument)) break;
  }
  if (!sawDocument) throw new ImportFileError(`The file is empty, not a JSON object with "${arrayKey}".`);
  if (!inArray) throw new ImportFileError(`The JSON document has no "${arrayKey}" array.`);
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}
