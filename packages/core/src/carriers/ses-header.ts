import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { isRecord } from '../json/record.js';
import { carriedStream, SERVICE_STREAM_HEADER, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';
import {
  isUnsubscribeHeaderName,
  recipientAddresses,
  unsubscribeHeadersOf,
  type UnsubscribeCarrierOptions,
} from './unsubscribe-headers.js';

/** What `attachSesHeaderTrackingId` takes beside the tracking ID. */
export interface SesHeaderCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {}

/** `Destination` of an SES v2 request or bulk entry, as far as the unsubscribe headers go. */
export interface SesDestination {
  ToAddresses?: readonly string[] | undefined;
}

/** The header that carries the tracking ID (docs/providers/ses.md#the-header-with-the-helper). Header names match case-insensitively. */
export const SERVICE_ID_HEADER = 'X-Service-Id';

/** RFC 2047 §2: an encoded word is at most 75 characters. */
const MAX_ENCODED_WORD = 75;
/** RFC 2047 §2: a header line that holds encoded words is at most 76 characters. */
const MAX_ENCODED_LINE = 76;
const WORD_PREFIX = '=?UTF-8?B?';
const WORD_SUFFIX = '?=';

/** One entry of SES v2 `Content.Simple.Headers` / `Content.Template.Headers` (`MessageHeader`). */
export interface SesMessageHeader {
  Name?: string | undefined;
  Value?: string | undefined;
}

/** `Content.Simple` or `Content.Template`; `object &` keeps TypeScript from treating it as a weak type. */
export type SesHeadersPart = object & { Headers?: readonly SesMessageHeader[] | undefined };

/** An entry of SES v2 `SendBulkEmail` (`BulkEmailEntry`), as far as headers go. */
export type SesBulkEntryHeaders = object & {
  ReplacementHeaders?: readonly SesMessageHeader[] | undefined;
  Destination?: SesDestination | undefined;
};

/**
 * The parts of an SES v2 `SendEmail` request (`SendEmailCommandInput`) or `SendBulkEmail` request
 * (`SendBulkEmailCommandInput`) that the header carrier touches.
 */
export interface SesV2HeadersRequest {
  Content?: { Simple?: SesHeadersPart | undefined; Template?: SesHeadersPart | undefined } | undefined;
  DefaultContent?: { Template?: SesHeadersPart | undefined } | undefined;
  BulkEmailEntries?: readonly SesBulkEntryHeaders[] | undefined;
  Destination?: SesDestination | undefined;
}

/**
 * The `X-Service-Id` value for a tracking ID, as words: the ID itself (one word) when it is printable
 * ASCII that survives a header unchanged, else RFC 2047 `=?UTF-8?B?…?=` words of at most 75
 * characters, split between characters. Join them with a space for an API header value, or fold them
 * (CRLF + space) in raw MIME. `firstWordMax` leaves room for the header name on the first line.
 */
export function encodeServiceIdHeader(trackingId: string, firstWordMax = MAX_ENCODED_WORD): string[] {
  if (isPlainHeaderValue(trackingId)) return [trackingId];
  const words: string[] = [];
  let chunk: Uint8Array[] = [];
  let chunkBytes = 0;
  let max = firstWordMax;
  for (const char of trackingId) {
    const bytes = utf8.encode(char);
    if (chunkBytes > 0 && encodedWordLength(chunkBytes + bytes.length) > max) {
      words.push(encodedWord(chunk));
      chunk = [];
      chunkBytes = 0;
      max = MAX_ENCODED_WORD;
    }
    chunk.push(bytes);
    chunkBytes += bytes.length;
  }
  words.push(encodedWord(chunk));
  return words;
}

/**
 * Adds `X-Service-Id` to a send request, replacing any `X-Service-Id` already there (whatever its
 * case), and returns a new request; the input is not changed.
 *
 * - A raw MIME message (string, for SES v1 `SendRawEmail` / v2 `Content.Raw`): the header goes at the
 *   end of the header block, before the blank line, with the message's own line endings; long
 *   encoded values are folded so every line stays within RFC 2047's 76 characters.
 * - An SES v2 `SendEmail` request: appended to `Content.Simple.Headers` (or `Content.Template.Headers`).
 * - An SES v2 `SendBulkEmail` request: appended to `DefaultContent.Template.Headers`, and to the
 *   `ReplacementHeaders` of each entry that has them (an entry's header would take precedence). A bulk
 *   send carries one tracking ID for all its entries.
 *
 * With `options.stream`, an `X-Service-Stream` header goes the same way (replacing any already there).
 *
 * With `options.unsubscribe`, `List-Unsubscribe` and `List-Unsubscribe-Post` with the link of the one
 * `Destination.ToAddresses` recipient: of the request (`SendEmail`, beside `X-Service-Id`), or of each
 * bulk entry, in its `ReplacementHeaders` (one link per entry, so per recipient). Several `ToAddresses`
 * in one message, or a raw MIME message (write `link.headers` into the MIME text), throw
 * `unsubscribe_not_carriable`.
 *
 * Throws `invalid_tracking_id` for an invalid ID, `invalid_stream` for an invalid stream, `invalid_request` for a v2 request without
 * `Content.Simple` or `Content.Template` (bulk: `DefaultContent.Template`), or with both `Content` and
 * the bulk fields.
 *
 * @example
 * const raw = attachSesHeaderTrackingId(mimeText, 'spring-sale');
 * await ses.send(new SendRawEmailCommand({ RawMessage: { Data: Buffer.from(raw) } }));
 *
 * @example
 * await sesv2.send(new SendEmailCommand(attachSesHeaderTrackingId({
 *   FromEmailAddress: 'shop@example.com',
 *   Destination: { ToAddresses: ['ana@example.org'] },
 *   Content: { Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } } },
 * }, 'spring-sale')));
 */
export function attachSesHeaderTrackingId(rawMessage: string, trackingId: string, options?: SesHeaderCarrierOptions): string;
export function attachSesHeaderTrackingId<R extends SesV2HeadersRequest>(
  request: R,
  trackingId: string,
  options?: SesHeaderCarrierOptions,
): R;
export function attachSesHeaderTrackingId(
  request: string | SesV2HeadersRequest,
  trackingId: string,
  options?: SesHeaderCarrierOptions,
): string | SesV2HeadersRequest {
  const id: Carried = { id: assertTrackingId(trackingId), stream: streamToCarry(options) };
  if (typeof request === 'string') {
    if (options?.unsubscribe !== undefined) {
      throw new MailwardenError(
        'unsubscribe_not_carriable',
        "A raw MIME message names its recipients in its own text: write the link's headers into it (List-Unsubscribe, List-Unsubscribe-Post) before attaching the tracking ID.",
      );
    }
    return insertRawHeader(request, id);
  }

  if (request.DefaultContent !== undefined || request.BulkEmailEntries !== undefined) {
    return attachBulkHeader(withBulkUnsubscribe(request, options), id);
  }
  const unsubscribe = unsubscribeHeadersOf(options, recipientAddresses(request.Destination?.ToAddresses), 'The SES message');
  const content = request.Content;
  const part = content?.Simple !== undefined ? 'Simple' : content?.Template !== undefined ? 'Template' : undefined;
  if (content === undefined || part === undefined) {
    throw new MailwardenError(
      'invalid_request',
      'The SES v2 request has no Content.Simple or Content.Template; for Content.Raw, attach the header to the MIME text before encoding it.',
    );
  }
  const headers = withUnsubscribe(content[part]?.Headers, unsubscribe);
  return { ...request, Content: { ...content, [part]: { ...content[part], Headers: withServiceIdHeader(headers, id) } } };
}

/** Headers with the two unsubscribe headers replaced by `unsubscribe`'s, when there are any. */
function withUnsubscribe(
  headers: readonly SesMessageHeader[] | undefined,
  unsubscribe: Readonly<Record<string, string>> | undefined,
): readonly SesMessageHeader[] | undefined {
  if (unsubscribe === undefined) return headers;
  return [
    ...(headers ?? []).filter((header) => !isUnsubscribeHeaderName(header.Name)),
    ...Object.entries(unsubscribe).map(([Name, Value]) => ({ Name, Value })),
  ];
}

/** SES v2 `SendBulkEmail`: each entry with the link of its one recipient in its `ReplacementHeaders`. */
function withBulkUnsubscribe(request: SesV2HeadersRequest, options: UnsubscribeCarrierOptions | undefined): SesV2HeadersRequest {
  if (options?.unsubscribe === undefined || request.BulkEmailEntries === undefined) return request;
  return {
    ...request,
    BulkEmailEntries: request.BulkEmailEntries.map((entry, index) => {
      const where = `SES BulkEmailEntries[${index}]`;
      const unsubscribe = unsubscribeHeadersOf(options, recipientAddresses(entry.Destination?.ToAddresses), where);
      return unsubscribe === undefined ? entry : { ...entry, ReplacementHeaders: withUnsubscribe(entry.ReplacementHeaders, unsubscribe) };
    }),
  };
}

/** SES v2 `SendBulkEmail`: the header in the shared template, and in every entry that sets headers of its own. */
function attachBulkHeader(request: SesV2HeadersRequest, id: Carried): SesV2HeadersRequest {
  const template = request.DefaultContent?.Template;
  if (request.Content !== undefined || template === undefined) {
    throw new MailwardenError(
      'invalid_request',
      request.Content !== undefined
        ? 'The SES v2 request has both Content (SendEmail) and DefaultContent or BulkEmailEntries (SendBulkEmail); the SDK would drop one of them.'
        : 'The SES v2 SendBulkEmail request has no DefaultContent.Template to carry the header.',
    );
  }
  return {
    ...request,
    DefaultContent: { ...request.DefaultContent, Template: { ...template, Headers: withServiceIdHeader(template.Headers, id) } },
    ...(request.BulkEmailEntries === undefined
      ? {}
      : {
          BulkEmailEntries: request.BulkEmailEntries.map((entry) =>
            entry.ReplacementHeaders === undefined
              ? entry
              : { ...entry, ReplacementHeaders: withServiceIdHeader(entry.ReplacementHeaders, id) },
          ),
        }),
  };
}

/** What the header carrier writes: the tracking ID, and the stream when there is one. */
interface Carried {
  id: string;
  stream: string | undefined;
}

/** The caller's headers without any `X-Service-Id` (whatever its case; nor `X-Service-Stream` when we add one), then ours. */
function withServiceIdHeader(headers: readonly SesMessageHeader[] | undefined, { id, stream }: Carried): SesMessageHeader[] {
  return [
    ...(headers ?? []).filter((header) => !isServiceIdName(header.Name) && !(stream !== undefined && isServiceStreamName(header.Name))),
    { Name: SERVICE_ID_HEADER, Value: encodeServiceIdHeader(id).join(' ') },
    ...(stream === undefined ? [] : [{ Name: SERVICE_STREAM_HEADER, Value: stream }]),
  ];
}

/**
 * The stream in SES `mail.headers` (`[{ name, value }]`): the first `X-Service-Stream` (any case);
 * `null` when the headers are absent or carry none.
 *
 * @example
 * readSesHeaderStream([{ name: 'X-Service-Stream', value: 'weekly-digest' }]); // 'weekly-digest'
 */
export function readSesHeaderStream(headers: unknown): string | null {
  if (!Array.isArray(headers)) return null;
  for (const header of headers) {
    if (!isRecord(header) || typeof header.name !== 'string' || !isServiceStreamName(header.name)) continue;
    return carriedStream(header.value);
  }
  return null;
}

/**
 * The tracking ID in SES `mail.headers` (`[{ name, value }]`): the first `X-Service-Id` (any case),
 * with encoded words decoded. `null` when the headers are absent (feedback notifications without
 * "include original headers") or carry no such header.
 */
export function readSesHeaderTrackingId(headers: unknown): string | null {
  if (!Array.isArray(headers)) return null;
  for (const header of headers) {
    if (!isRecord(header) || typeof header.name !== 'string' || !isServiceIdName(header.name)) continue;
    if (typeof header.value !== 'string') return null;
    const id = decodeHeaderValue(header.value);
    return id === '' ? null : id;
  }
  return null;
}

/**
 * An unstructured header value with its RFC 2047 encoded words (B or Q, any charset TextDecoder knows)
 * decoded. Folding is undone, and white space between adjacent encoded words is dropped (RFC 2047 §6.2).
 * A word that cannot be decoded stays as it was written (RFC 2047 §6.3).
 */
export function decodeHeaderValue(value: string): string {
  const text = value.replace(/\r?\n(?=[ \t])/g, '');
  let result = '';
  let run: EncodedRun | undefined;
  let last = 0;
  for (const match of text.matchAll(ENCODED_WORD)) {
    const between = text.slice(last, match.index);
    const bytes = wordBytes(match[3]!, match[4]!);
    const charset = match[1]!.toLowerCase();
    last = match.index + match[0].length;
    if (bytes === undefined) {
      result += flush(run) + between + match[0];
      run = undefined;
    } else if (run !== undefined && /^[ \t]*$/.test(between) && run.charset === charset) {
      run.bytes.push(bytes);
      run.source += between + match[0];
    } else {
      // White space between two encoded words of different charsets is dropped too.
      result += flush(run) + (run !== undefined && /^[ \t]*$/.test(between) ? '' : between);
      run = { charset, bytes: [bytes], source: match[0] };
    }
  }
  return result + flush(run) + text.slice(last);
}

const utf8 = new TextEncoder();

/** `=?charset[*language]?encoding?text?=`; the text holds no `?` and no white space. */
const ENCODED_WORD = /=\?([^?\s*]+)(\*[^?\s]*)?\?([BbQq])\?([^?\s]*)\?=/g;

interface EncodedRun {
  charset: string;
  bytes: Uint8Array[];
  /** The words as written, for when they cannot be decoded. */
  source: string;
}

function flush(run: EncodedRun | undefined): string {
  if (run === undefined) return '';
  try {
    // ignoreBOM keeps a leading U+FEFF: it is part of the value, not a byte-order mark.
    return new TextDecoder(run.charset, { fatal: true, ignoreBOM: true }).decode(Buffer.concat(run.bytes));
  } catch {
    return run.source;
  }
}

function wordBytes(encoding: string, text: string): Uint8Array | undefined {
  if (encoding.toUpperCase() === 'B') {
    const digits = text.replace(/={1,2}$/, '');
    return /^[A-Za-z0-9+/]*$/.test(digits) && digits.length % 4 !== 1 ? Buffer.from(digits, 'base64') : undefined;
  }
  // Q encoding (RFC 2047 §4.2): `_` is a space, `=XX` a byte, anything else printable ASCII as is.
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '_') bytes.push(0x20);
    else if (char === '=') {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (char >= '!' && char <= '~') bytes.push(char.charCodeAt(0));
    else return undefined;
  }
  return Uint8Array.from(bytes);
}

/**
 * Printable ASCII goes as is, unless it would not come back literally: `=?` reads as an encoded word,
 * and parsers trim white space at either end of a header value.
 */
function isPlainHeaderValue(value: string): boolean {
  return /^[!-~](?:[ -~]*[!-~])?$/.test(value) && !value.includes('=?');
}

function encodedWordLength(bytes: number): number {
  return WORD_PREFIX.length + 4 * Math.ceil(bytes / 3) + WORD_SUFFIX.length;
}

function encodedWord(chunk: Uint8Array[]): string {
  return WORD_PREFIX + Buffer.concat(chunk).toString('base64') + WORD_SUFFIX;
}

function isServiceIdName(name: string | undefined): boolean {
  return name?.trim().toLowerCase() === 'x-service-id';
}

function isServiceStreamName(name: string | undefined): boolean {
  return name?.trim().toLowerCase() === SERVICE_STREAM_HEADER.toLowerCase();
}

/** Inserts the header before the blank line that ends the header block, dropping any earlier `X-Service-Id`. */
function insertRawHeader(message: string, { id: trackingId, stream }: Carried): string {
  const lines = message.split(/(?<=\n)/);
  let end = lines.findIndex((line) => line === '\n' || line === '\r\n' || line === '');
  if (end === -1) end = lines.length;
  const newline = lines.find((line) => line.endsWith('\n'))?.endsWith('\r\n') === false ? '\n' : '\r\n';

  const kept: string[] = [];
  let dropping = false;
  for (const line of lines.slice(0, end)) {
    // A line starting with white space continues the field above it.
    if (!line.startsWith(' ') && !line.startsWith('\t')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon);
      dropping = colon > 0 && (isServiceIdName(name) || (stream !== undefined && isServiceStreamName(name)));
    }
    if (!dropping) kept.push(line);
  }
  const lastKept = kept.at(-1);
  if (lastKept !== undefined && !lastKept.endsWith('\n')) kept[kept.length - 1] = lastKept + newline;

  const prefix = `${SERVICE_ID_HEADER}: `;
  const words = encodeServiceIdHeader(trackingId, MAX_ENCODED_LINE - prefix.length);
  const field = prefix + words.join(`${newline} `) + newline;
  const streamField = stream === undefined ? '' : `${SERVICE_STREAM_HEADER}: ${stream}${newline}`;
  return kept.join('') + field + streamField + lines.slice(end).join('');
}
