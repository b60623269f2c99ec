import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse } from 'csv-parse/sync';
import { isStreamName, type SuppressionReason } from '@mailwarden/core';
import { ImportFileError, type SourceRecord } from './import-records.js';

/**
 * The files `importSuppressions` reads: our own CSV and JSON Lines (and any list with an address
 * column), and the exports of the providers people move from. docs/server.md has each one's fields.
 */
export const importFormats = [
  'csv',
  'jsonl',
  'ses',
  'ses-import',
  'sendgrid-bounces',
  'sendgrid-spam-reports',
  'sendgrid-invalid-emails',
  'sendgrid-unsubscribes',
  'sendgrid-group-unsubscribes',
  'postmark',
  'mailgun-bounces',
  'mailgun-complaints',
  'mailgun-unsubscribes',
  'resend',
] as const;
export type ImportFormat = (typeof importFormats)[number];

/**
 * Whether a string names a format `importSuppressions` reads.
 *
 * @example
 * if (!isImportFormat(flag)) throw new Error(`--format is one of ${importFormats.join(', ')}`);
 */
export function isImportFormat(value: string): value is ImportFormat {
  return (importFormats as readonly string[]).includes(value);
}

/**
 * The formats that list only bounces and complaints: they say an address takes no mail at all, so they
 * import into the project-wide list only, as a bounce event suppresses project-wide (`--stream` is refused).
 */
export const projectWideFormats: readonly ImportFormat[] = [
  'ses',
  'ses-import',
  'sendgrid-bounces',
  'sendgrid-spam-reports',
  'sendgrid-invalid-emails',
  'mailgun-bounces',
  'mailgun-complaints',
  'resend',
];

/**
 * The formats whose unsubscribes are scoped by the provider to a group of mail: a SendGrid unsubscribe
 * group (`group_id`), a Mailgun tag other than `*`. Each group is mapped to a stream (`--group-stream`).
 */
export const groupedFormats: readonly ImportFormat[] = ['sendgrid-group-unsubscribes', 'mailgun-unsubscribes'];

/** How a file is split into records. */
export type Container = 'csv' | 'jsonl' | 'json';

/** What one record means. */
export type ImportRow =
  /** A header or a blank row: nothing to do. */
  | { kind: 'none' }
  | {
      kind: 'add';
      email: string;
      reason: SuppressionReason;
      createdAt?: string;
      /** When it stops suppressing (our export's `expires_at`), ISO 8601; absent: the project's rules decide. */
      expiresAt?: string;
      /** The recipient unsubscribed: reason `manual`, recorded with `source: unsubscribe`. */
      unsubscribe?: true;
      /** The stream the file names for the row (our export's `stream` column); absent: none named. */
      stream?: string;
      /** The provider's group the unsubscribe is scoped to (a SendGrid group ID, a Mailgun tag), to map to a stream. */
      group?: string;
    }
  /** Readable, but not something mailwarden imports. */
  | { kind: 'skip'; value: string; why: string }
  | { kind: 'invalid'; value: string; why: string };

/** Everything decided about a file before its records are read; the same on every run over the file. */
export interface ImportPlan {
  format: ImportFormat;
  /** How the format was decided, for the summary: `given`, or what gave it away. */
  detectedBy: string;
  container: Container;
  /** CSV only. */
  delimiter: string;
  /** JSON documents only: the key of the array of records. */
  arrayKey: string;
  /** What a record means. `first` is true for the file's first record (which may be a header). */
  interpret(record: SourceRecord, first: boolean): ImportRow;
}

const HEAD_BYTES = 64 * 1024;

/**
 * Decides how to read a file: the given format, else from the extension and the first records (the
 * header row of a CSV, the first key of a JSON document). Provider exports are recognised only where
 * their columns or keys say so unambiguously; anything else is our plain `csv` or `jsonl`.
 *
 * @example
 * const plan = await planImport('ses.json', undefined);
 * // { format: 'ses', detectedBy: 'the key SuppressedDestinationSummaries', container: 'json', … }
 */
export async function planImport(file: string, given: ImportFormat | undefined): Promise<ImportPlan> {
  const head = await readHead(file);
  const text = head.toString('utf8').replace(/^\uFEFF/, '');
  const detected = given === undefined ? detectFormat(file, text) : { format: given, how: 'given' };
  return planFor(detected.format, detected.how, text);
}

async function readHead(file: string): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function detectFormat(file: string, head: string): { format: ImportFormat; how: string } {
  const extension = extname(file).toLowerCase();
  if (extension === '.jsonl' || extension === '.ndjson') return { format: 'jsonl', how: `the extension ${extension}` };
  const start = head.trimStart();
  if (start.startsWith('{') || start.startsWith('[') || extension === '.json') {
    const key = /^\{\s*"([^"\\]*)"\s*:\s*\[/.exec(start)?.[1];
    if (key === 'SuppressedDestinationSummaries') return { format: 'ses', how: 'the key SuppressedDestinationSummaries' };
    if (key === 'Suppressions') return { format: 'postmark', how: 'the key Suppressions' };
    // Resend's GET /suppressions answer: `{ "object": "list", "has_more": …, "data": [{ email, origin, … }] }`.
    if (/^\{\s*"object"\s*:\s*"list"/.test(start) && /"origin"\s*:/.test(start)) {
      return { format: 'resend', how: 'a Resend list ("object": "list") of suppressions with an origin' };
    }
    if (start.startsWith('{') && extension !== '.json') return { format: 'jsonl', how: 'a first line starting with {' };
    throw new ImportFileError(
      'This JSON is neither JSON Lines nor an export this command knows (aws sesv2 list-suppressed-destinations, a Postmark suppression dump). Name the format with --format.',
    );
  }
  const delimiter = sniffDelimiter(start);
  const [first, second] = firstRecords(start, delimiter);
  if (first === undefined) return { format: 'csv', how: 'an empty file' };
  const columns = new Set(first.map(columnName));
  const has = (...names: string[]) => names.every((name) => columns.has(name));
  const header = first.join(',');
  if (has('email', 'groupid')) return { format: 'sendgrid-group-unsubscribes', how: `the header ${header}` };
  if (has('email', 'created', 'status')) return { format: 'sendgrid-bounces', how: `the header ${header}` };
  if (has('email', 'created', 'ip')) return { format: 'sendgrid-spam-reports', how: `the header ${header}` };
  // Our own reasons in a reason column make it a list of ours that happens to call its time `created`.
  const reasonColumn = first.findIndex((field) => columnName(field) === 'reason');
  if (has('email', 'created', 'reason') && reasonOf(second?.[reasonColumn] ?? 'x') === undefined) {
    return { format: 'sendgrid-invalid-emails', how: `the header ${header}` };
  }
  if (has('email', 'created') && columns.size === 2) return { format: 'sendgrid-unsubscribes', how: `the header ${header}` };
  if (has('address', 'code') || has('address', 'error')) return { format: 'mailgun-bounces', how: `the header ${header}` };
  if (has('address', 'tags')) return { format: 'mailgun-unsubscribes', how: `the header ${header}` };
  // Mailgun complaints have only an address and a time: told from any list of addresses by Mailgun's
  // RFC 2822 time on the first row.
  const timeColumn = first.findIndex((field) => columnName(field) === 'createdat');
  if (has('address', 'createdat') && columns.size === 2 && RFC_2822.test((second?.[timeColumn] ?? '').trim())) {
    return { format: 'mailgun-complaints', how: `the header ${header} and an RFC 2822 time` };
  }
  const reasonOfSes = (value: string | undefined) => /^(BOUNCE|COMPLAINT)$/i.test((value ?? '').trim());
  if (has('emailaddress', 'reason') && columns.size === 2 && reasonOfSes(second?.[reasonColumn])) {
    return { format: 'ses-import', how: `the header ${header} and an SES reason` };
  }
  if (first.length === 2 && (first[0] ?? '').includes('@') && reasonOfSes(first[1])) {
    return { format: 'ses-import', how: 'rows of an address and BOUNCE or COMPLAINT' };
  }
  return { format: 'csv', how: extension === '.csv' ? 'the extension .csv' : 'content that is not JSON' };
}

function planFor(format: ImportFormat, detectedBy: string, head: string): ImportPlan {
  const base = { format, detectedBy, delimiter: ',', arrayKey: '' };
  switch (format) {
    case 'jsonl':
      return { ...base, container: 'jsonl', interpret: (record) => jsonRow(record, readGenericObject) };
    case 'ses':
      return {
        ...base,
        container: 'json',
        arrayKey: 'SuppressedDestinationSummaries',
        interpret: (record) => jsonRow(record, readSesObject),
      };
    case 'postmark':
      return { ...base, container: 'json', arrayKey: 'Suppressions', interpret: (record) => jsonRow(record, readPostmarkObject) };
    case 'resend':
      return { ...base, container: 'json', arrayKey: 'data', interpret: (record) => jsonRow(record, readResendObject) };
    default: {
      const delimiter = sniffDelimiter(head.trimStart());
      const [first] = firstRecords(head.trimStart(), delimiter);
      return { ...base, container: 'csv', delimiter, interpret: csvInterpreter(format, first ?? []) };
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// CSV

/** A header cell as a name: lower case, letters and digits only (`Email Address` → `emailaddress`). */
function columnName(field: string): string {
  return field.toLowerCase().replace(/[^a-z0-9]/g, '');
}

const EMAIL_COLUMNS = ['email', 'emailaddress', 'address', 'recipient'];
const REASON_COLUMNS = ['reason', 'suppressionreason'];
const TIME_COLUMNS = ['createdat', 'created', 'lastupdatetime', 'timestamp', 'time', 'date'];
const EXPIRY_COLUMNS = ['expiresat', 'expires'];

/** The first of `names` (in their order of preference) that the header has. */
function columnOf(header: string[], names: readonly string[]): number | undefined {
  const cells = header.map(columnName);
  for (const name of names) {
    const index = cells.indexOf(name);
    if (index !== -1) return index;
  }
  return undefined;
}

/** What each CSV format takes from its columns. */
interface CsvLayout {
  header: boolean;
  email: number;
  reason?: number;
  time?: number;
  /** Our export's `expires_at` column. */
  expiry?: number;
  /** Our export of a stream: the `stream` column. */
  stream?: number;
  /** The column of the provider's group an unsubscribe is scoped to: SendGrid's `group_id`, Mailgun's `tags`. */
  group?: number;
  /** A fixed reason, or an unsubscribe list; else the reason column decides. */
  fixed?: SuppressionReason | 'unsubscribe';
  /** The reason column holds SES's BOUNCE or COMPLAINT only. */
  sesReasons?: boolean;
}

function csvLayout(format: ImportFormat, first: string[]): CsvLayout {
  const required = (names: readonly string[], what: string) => {
    const index = columnOf(first, names);
    if (index === undefined) {
      throw new ImportFileError(`A ${format} file starts with a header that has ${what}; this one starts with: ${first.join(',')}`);
    }
    return index;
  };
  const optionalTime = columnOf(first, TIME_COLUMNS);
  const withTime = (layout: CsvLayout): CsvLayout => (optionalTime === undefined ? layout : { ...layout, time: optionalTime });
  switch (format) {
    case 'sendgrid-bounces':
    case 'sendgrid-invalid-emails':
      return withTime({ header: true, email: required(['email'], 'an email column'), fixed: 'hard_bounce' });
    case 'sendgrid-spam-reports':
      return withTime({ header: true, email: required(['email'], 'an email column'), fixed: 'complaint' });
    case 'sendgrid-unsubscribes':
      return withTime({ header: true, email: required(['email'], 'an email column'), fixed: 'unsubscribe' });
    case 'sendgrid-group-unsubscribes':
      return withTime({
        header: true,
        email: required(['email'], 'an email column'),
        group: required(['groupid'], 'a group_id column'),
        fixed: 'unsubscribe',
      });
    case 'mailgun-bounces':
      return withTime({ header: true, email: required(['address'], 'an address column'), fixed: 'hard_bounce' });
    case 'mailgun-complaints':
      return withTime({ header: true, email: required(['address'], 'an address column'), fixed: 'complaint' });
    case 'mailgun-unsubscribes': {
      const tags = columnOf(first, ['tags', 'tag']);
      return withTime({
        header: true,
        email: required(['address'], 'an address column'),
        ...(tags === undefined ? {} : { group: tags }),
        fixed: 'unsubscribe',
      });
    }
    case 'ses-import': {
      const header = columnName(first[0] ?? '') === 'emailaddress';
      return { header, email: 0, reason: header ? (columnOf(first, ['reason']) ?? 1) : 1, sesReasons: true };
    }
    default: {
      // Our CSV and any list: a header naming an address column; else a first field without @ is a
      // header with the address in the first column; else there is no header.
      const email = columnOf(first, EMAIL_COLUMNS);
      if (email === undefined) return { header: first.length > 0 && !(first[0] ?? '').includes('@'), email: 0 };
      const reason = columnOf(first, REASON_COLUMNS);
      const stream = columnOf(first, ['stream']);
      const expiry = columnOf(first, EXPIRY_COLUMNS);
      return {
        ...withTime({ header: true, email }),
        ...(reason === undefined ? {} : { reason }),
        ...(stream === undefined ? {} : { stream }),
        ...(expiry === undefined ? {} : { expiry }),
      };
    }
  }
}

function csvInterpreter(format: ImportFormat, first: string[]): ImportPlan['interpret'] {
  const layout = csvLayout(format, first);
  return (record, isFirst) => {
    if (record.error !== undefined) return { kind: 'invalid', value: record.text, why: record.error };
    const fields = record.fields ?? [];
    if (isFirst && layout.header) return { kind: 'none' };
    if (fields.every((field) => field.trim() === '')) return { kind: 'none' };
    const email = fields[layout.email];
    if (email === undefined) return { kind: 'invalid', value: record.text, why: `no column ${layout.email + 1}` };
    const reasonText = layout.reason === undefined ? undefined : (fields[layout.reason] ?? '');
    let reason: SuppressionReason | 'unsubscribe';
    if (layout.fixed !== undefined) reason = layout.fixed;
    else if (layout.sesReasons === true) {
      const ses = sesReason(reasonText);
      if (ses === undefined)
        return { kind: 'invalid', value: record.text, why: `reason ${JSON.stringify(reasonText ?? '')} is not BOUNCE or COMPLAINT` };
      reason = ses;
    } else {
      const mapped = reasonText === undefined ? 'manual' : reasonOf(reasonText);
      if (mapped === undefined) return { kind: 'invalid', value: record.text, why: `unknown reason ${JSON.stringify(reasonText)}` };
      reason = mapped;
    }
    const scope: RowScope = {};
    if (layout.stream !== undefined) scope.stream = fields[layout.stream] ?? '';
    if (layout.group !== undefined) scope.group = fields[layout.group] ?? '';
    if (layout.expiry !== undefined) scope.expiresAt = fields[layout.expiry];
    return rowOf(email, reason, layout.time === undefined ? undefined : fields[layout.time], record.text, scope);
  };
}

/** `,`, `;` or a tab: whichever the first line has most of outside quotes; `,` when none. */
function sniffDelimiter(text: string): string {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
  ]);
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}

/** The first two records of the head of a file (the head may end mid-record). */
function firstRecords(head: string, delimiter: string): string[][] {
  return parse(head, {
    delimiter,
    to: 2,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
  }) as string[][];
}

// ---------------------------------------------------------------------------------------------------
// JSON

type ObjectReader = (object: Record<string, unknown>, text: string) => ImportRow;

function jsonRow(record: SourceRecord, read: ObjectReader): ImportRow {
  if (record.error !== undefined) return { kind: 'invalid', value: record.text, why: record.error };
  const value = record.json;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { kind: 'invalid', value: record.text, why: 'not a JSON object' };
  return read(value as Record<string, unknown>, record.text);
}

/** Our JSON Lines (`email`, `reason`, `created_at`), and lines with the providers' names for them. */
const readGenericObject: ObjectReader = (object, text) => {
  const email = firstOf(object, ['email', 'emailAddress', 'EmailAddress', 'address']);
  if (typeof email !== 'string') return { kind: 'invalid', value: text, why: '"email" is missing or not a string' };
  const reasonValue = firstOf(object, ['reason', 'Reason', 'SuppressionReason']);
  if (reasonValue !== undefined && reasonValue !== null && typeof reasonValue !== 'string') {
    return { kind: 'invalid', value: text, why: '"reason" is not a string' };
  }
  const reason = reasonValue === undefined || reasonValue === null ? 'manual' : reasonOf(reasonValue);
  if (reason === undefined) return { kind: 'invalid', value: text, why: `unknown reason ${JSON.stringify(reasonValue)}` };
  const stream = object.stream;
  if (stream !== undefined && stream !== null && typeof stream !== 'string')
    return { kind: 'invalid', value: text, why: '"stream" is not a string' };
  const expiresAt = firstOf(object, ['expires_at', 'expiresAt']);
  return rowOf(email, reason, firstOf(object, ['created_at', 'createdAt', 'CreatedAt', 'LastUpdateTime', 'created', 'timestamp']), text, {
    ...(typeof stream === 'string' ? { stream } : {}),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  });
};

/** An element of `SuppressedDestinationSummaries`: `EmailAddress`, `Reason`, `LastUpdateTime`. */
const readSesObject: ObjectReader = (object, text) => {
  const email = object.EmailAddress;
  if (typeof email !== 'string') return { kind: 'invalid', value: text, why: '"EmailAddress" is missing or not a string' };
  const reason = typeof object.Reason === 'string' ? sesReason(object.Reason) : undefined;
  if (reason === undefined)
    return { kind: 'invalid', value: text, why: `"Reason" ${JSON.stringify(object.Reason)} is not BOUNCE or COMPLAINT` };
  return rowOf(email, reason, object.LastUpdateTime, text);
};

/** An element of Postmark's `Suppressions`: `EmailAddress`, `SuppressionReason`, `Origin`, `CreatedAt`. */
const readPostmarkObject: ObjectReader = (object, text) => {
  const email = object.EmailAddress;
  if (typeof email !== 'string') return { kind: 'invalid', value: text, why: '"EmailAddress" is missing or not a string' };
  let reason: SuppressionReason | 'unsubscribe';
  switch (object.SuppressionReason) {
    case 'HardBounce':
      reason = 'hard_bounce';
      break;
    case 'SpamComplaint':
      reason = 'complaint';
      break;
    case 'ManualSuppression':
      // Origin Recipient: the recipient used the unsubscribe link. Customer or Admin: added by hand.
      reason = object.Origin === 'Recipient' ? 'unsubscribe' : 'manual';
      break;
    default:
      return {
        kind: 'invalid',
        value: text,
        why: `"SuppressionReason" ${JSON.stringify(object.SuppressionReason)} is not HardBounce, SpamComplaint or ManualSuppression`,
      };
  }
  return rowOf(email, reason, object.CreatedAt, text);
};

/** An element of Resend's `GET /suppressions` `data`: `email`, `origin` (bounce, complaint or manual), `created_at`. */
const readResendObject: ObjectReader = (object, text) => {
  const email = object.email;
  if (typeof email !== 'string') return { kind: 'invalid', value: text, why: '"email" is missing or not a string' };
  const reason = resendOrigins.get(object.origin);
  if (reason === undefined) {
    return { kind: 'invalid', value: text, why: `"origin" ${JSON.stringify(object.origin)} is not bounce, complaint or manual` };
  }
  return rowOf(email, reason, object.created_at, text);
};

const resendOrigins = new Map<unknown, SuppressionReason>([
  ['bounce', 'hard_bounce'],
  ['complaint', 'complaint'],
  ['manual', 'manual'],
]);

function firstOf(object: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const key of keys) if (object[key] !== undefined) return object[key];
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Reasons and times

/**
 * What a row says beside its address, reason and time, as written: the list it goes to (a stream
 * column, a provider's group) and when it expires (our export's `expires_at`). None of the providers'
 * exports we read has an expiry (docs/server.md, "Expiry in imports and exports").
 */
interface RowScope {
  stream?: string;
  group?: string;
  expiresAt?: unknown;
}

/** Mailgun's tag for an unsubscribe from every mail of the domain. */
const MAILGUN_ALL_TAGS = '*';

/**
 * A row to add. An unsubscribe is `manual` with `unsubscribe: true` (docs/decisions.md, "How an
 * unsubscribe is shown"). An empty stream cell names none; another that is no stream name is an invalid
 * row. An empty group, or Mailgun's `*`, is no group: the recipient left every mail.
 */
function rowOf(email: string, reason: SuppressionReason | 'unsubscribe', time: unknown, text: string, scope: RowScope = {}): ImportRow {
  const createdAt = parseTime(time);
  if (createdAt === null) return { kind: 'invalid', value: text, why: `unreadable time ${JSON.stringify(time)}` };
  const expiresAt = parseTime(scope.expiresAt);
  if (expiresAt === null) return { kind: 'invalid', value: text, why: `unreadable expiry ${JSON.stringify(scope.expiresAt)}` };
  const stream = scope.stream?.trim() ?? '';
  if (stream !== '' && !isStreamName(stream))
    return { kind: 'invalid', value: text, why: `stream ${JSON.stringify(stream)} is not a stream name` };
  const group = scope.group?.trim() ?? '';
  return {
    kind: 'add',
    email,
    ...(reason === 'unsubscribe' ? { reason: 'manual', unsubscribe: true } : { reason }),
    ...(createdAt === undefined ? {} : { createdAt }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(stream === '' ? {} : { stream }),
    ...(reason !== 'unsubscribe' || group === '' || group === MAILGUN_ALL_TAGS ? {} : { group }),
  };
}

function sesReason(value: string | undefined): SuppressionReason | undefined {
  const upper = (value ?? '').trim().toUpperCase();
  return upper === 'BOUNCE' ? 'hard_bounce' : upper === 'COMPLAINT' ? 'complaint' : undefined;
}

/**
 * Our reasons, and the providers' words for them; an empty reason is `manual`.
 *
 * @example
 * reasonOf('SpamComplaint') // 'complaint'
 * reasonOf('unsubscribed') // 'unsubscribe': imported as `manual`, with `source: unsubscribe`
 * reasonOf('soft_bounce') // undefined: an invalid row
 */
export function reasonOf(value: string): SuppressionReason | 'unsubscribe' | undefined {
  switch (value.toLowerCase().replace(/[^a-z]/g, '')) {
    case '':
    case 'manual':
    case 'manualsuppression':
      return 'manual';
    case 'hardbounce':
    case 'bounce':
    case 'bounced':
      return 'hard_bounce';
    case 'complaint':
    case 'spamcomplaint':
    case 'spamreport':
    case 'spam':
      return 'complaint';
    case 'unsubscribe':
    case 'unsubscribed':
      return 'unsubscribe';
    default:
      return undefined;
  }
}

const ISO_8601 = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?\s*(Z|[+-]\d{2}:?\d{2})?$/i;
const RFC_2822 = /^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{2}:\d{2}(?::\d{2})?\s*(?:GMT|UTC|UT|Z|[+-]\d{4})$/;
const EPOCH = /^\d+(?:\.\d+)?$/;

/**
 * A time as an ISO 8601 string with milliseconds: ISO 8601 (with any fraction; without an offset it is
 * UTC), RFC 2822 (Mailgun), or Unix seconds (SendGrid, SES through AWS CLI v1; 10¹¹ and more are
 * milliseconds). Undefined when there is none; null when it cannot be read.
 *
 * @example
 * parseTime('Tue, 05 Mar 2024 09:15:27 UTC') // '2024-03-05T09:15:27.000Z'
 * parseTime(1709630127) // '2024-03-05T09:15:27.000Z'
 * parseTime('') // undefined
 */
export function parseTime(value: unknown): string | undefined | null {
  if (value === undefined || value === null) return undefined;
  let ms: number;
  if (typeof value === 'number') ms = epochMs(value);
  else if (typeof value !== 'string') return null;
  else {
    const text = value.trim();
    if (text === '') return undefined;
    if (isCanonical(text)) return text;
    const iso = ISO_8601.exec(text);
    if (iso !== null) {
      const [, date, time = '00:00', zone = 'Z'] = iso;
      // Fractions past milliseconds (SES writes microseconds) are cut, as the store keeps milliseconds.
      const clock = time.replace(/(\.\d{3})\d+$/, '$1');
      ms = Date.parse(
        `${date}T${clock.length === 5 ? `${clock}:00` : clock}${zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`,
      );
    } else if (RFC_2822.test(text)) ms = Date.parse(text);
    else if (EPOCH.test(text)) ms = epochMs(Number(text));
    else return null;
  }
  if (!Number.isFinite(ms)) return null;
  const date = new Date(Math.trunc(ms));
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Whether a time is already what `parseTime` returns: written as `toISOString` writes it (our export
 * does), and an instant on the day and hour written (`Date.parse` rolls `02-30` into March and `24:00`
 * into the next day). Then it is kept as it is: `toISOString` for every row cost a fifth of the time
 * an import spent outside the store.
 */
function isCanonical(text: string): boolean {
  if (!CANONICAL.test(text)) return false;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return false;
  const date = new Date(ms);
  return date.getUTCDate() === Number(text.slice(8, 10)) && date.getUTCHours() === Number(text.slice(11, 13));
}

function epochMs(value: number): number {
  return value >= 1e11 ? value : value * 1000;
}
