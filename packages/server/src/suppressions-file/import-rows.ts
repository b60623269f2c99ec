import { extname } from 'node:path';

/** The file formats `importSuppressions` reads. */
export type ImportFormat = 'csv' | 'jsonl';

/** What one non-blank line of an import file holds. */
export type ImportRow = { kind: 'email'; email: string } | { kind: 'invalid'; value: string; reason: string };

/** Where a CSV file keeps its addresses, decided on its first non-blank row. */
export interface CsvLayout {
  emailColumn: number;
  /** Whether the first row is a header, and so holds no address. */
  header: boolean;
}

/** The format a file name says (`.csv`, `.jsonl`, `.ndjson`), if any. */
export function formatFromExtension(file: string): ImportFormat | undefined {
  const extension = extname(file).toLowerCase();
  if (extension === '.csv') return 'csv';
  if (extension === '.jsonl' || extension === '.ndjson') return 'jsonl';
  return undefined;
}

/** The format of a file without a telling extension, from its first non-blank line. */
export function sniffFormat(firstLine: string): ImportFormat {
  return firstLine.trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

/** One JSON Lines row: an object with a string `email`. Other properties are ignored. */
export function parseJsonlRow(text: string): ImportRow {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'invalid', value: text, reason: 'not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'invalid', value: text, reason: 'not a JSON object' };
  }
  const email: unknown = (value as { email?: unknown }).email;
  if (typeof email !== 'string') return { kind: 'invalid', value: text, reason: '"email" is missing or not a string' };
  return { kind: 'email', email };
}

/**
 * Decides the layout from the first non-blank row: a column named `email` (any case) is a header; a
 * first field without `@` (so no valid address either) is a header with the address in column 0;
 * anything else is data with the address in column 0.
 */
export function csvLayoutOf(text: string): CsvLayout {
  const fields = parseCsvFields(text);
  if (!Array.isArray(fields)) return { emailColumn: 0, header: false };
  const named = fields.findIndex((field) => field.trim().toLowerCase() === 'email');
  if (named !== -1) return { emailColumn: named, header: true };
  return { emailColumn: 0, header: !(fields[0] ?? '').includes('@') };
}

/** One CSV data row: the address is the field at `emailColumn`. Other columns are ignored. */
export function parseCsvRow(text: string, emailColumn: number): ImportRow {
  const fields = parseCsvFields(text);
  if (!Array.isArray(fields)) return { kind: 'invalid', value: text, reason: fields.error };
  const email = fields[emailColumn];
  if (email === undefined) return { kind: 'invalid', value: text, reason: `no column ${emailColumn + 1}` };
  return { kind: 'email', email };
}

/**
 * Splits one CSV line into fields, RFC 4180 style: comma-separated, a field in double quotes may hold
 * commas and `""` for a quote (spaces around the quotes are allowed). A quoted field cannot span lines:
 * the importer reads physical lines, so one that does not close on its line is an error.
 */
export function parseCsvFields(line: string): string[] | { error: string } {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    const opening = skipBlanks(line, i);
    if (line[opening] === '"') {
      let value = '';
      i = opening + 1;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote === -1) return { error: 'unterminated quoted field (a field cannot span lines)' };
        value += line.slice(i, quote);
        i = quote + 1;
        if (line[i] !== '"') break;
        value += '"';
        i++;
      }
      fields.push(value);
      i = skipBlanks(line, i);
      if (i === line.length) return fields;
      if (line[i] !== ',') return { error: 'text after a closing quote' };
      i++;
    } else {
      const comma = line.indexOf(',', i);
      if (comma === -1) {
        fields.push(line.slice(i));
        return fields;
      }
      fields.push(line.slice(i, comma));
      i = comma + 1;
    }
  }
}

function skipBlanks(line: string, i: number): number {
  while (line[i] === ' ' || line[i] === '\t') i++;
  return i;
}
