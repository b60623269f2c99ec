import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { jsonObjectMembers, type JsonMemberText } from '../json/members.js';
import { isRecord } from '../json/record.js';
import { BASE64URL_ID_ENCODING, decodeBase64urlId, encodeBase64urlId } from './base64url-id.js';
import { metadataTrackingId } from './metadata-value.js';
import {
  isUnsubscribeHeaderName,
  LIST_UNSUBSCRIBE,
  LIST_UNSUBSCRIBE_POST,
  recipientAddresses,
  unsubscribeHeadersOf,
  type UnsubscribeCarrierOptions,
} from './unsubscribe-headers.js';
import { carriedStream, SERVICE_STREAM_KEY, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';

/** "Sending options (those prefixed by o:, h:, or v:) are limited to 16 kB in total" (Mailgun sending API). */
export const MAILGUN_OPTIONS_MAX_BYTES = 16_384;

/** RFC 5322 §2.1.1: a header line holds at most 998 octets; longer values must be folded. */
export const MAILGUN_HEADER_LINE_MAX_BYTES = 998;

export const MAILGUN_VARIABLES_HEADER = 'X-Mailgun-Variables';

/** Present (value `b64u`) when the `service_id` variable holds base64url of the ID's UTF-8 instead of the ID itself. */
export const MAILGUN_SERVICE_ID_ENCODING_VARIABLE = 'service_id_enc';

const variableField = 'v:service_id';
const encodingVariableField = `v:${MAILGUN_SERVICE_ID_ENCODING_VARIABLE}`;
const streamVariableField = `v:${SERVICE_STREAM_KEY}`;
const headerField = `h:${MAILGUN_VARIABLES_HEADER}`;

/**
 * The message fields of Mailgun's `POST /v3/{domain}/messages`: a plain object as `mailgun.js`'s
 * `messages.create` takes it, or the `URLSearchParams` / `FormData` of a hand-made request.
 */
export type MailgunMessageFields = object | URLSearchParams | FormData;

export interface MailgunCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {
  /**
   * `variable` (default): the `v:service_id` field. `header`: merged into the `h:X-Mailgun-Variables` JSON
   * field. Either way the other carrier's `service_id` is removed, so the two can never disagree.
   */
  via?: 'variable' | 'header';
}

export interface MailgunSmtpCarrierOptions extends StreamCarrierOptions {
  /**
   * `true` (default) writes nodemailer's `{ prepared: true, value }`, so nodemailer sends the JSON verbatim
   * (it would otherwise RFC 2047-encode the quotes and Mailgun could not parse it). `false` writes the plain
   * string, for SMTP clients that write header values as given.
   */
  prepared?: boolean;
  /**
   * `false` (default): the header is 7-bit ASCII, every non-ASCII character (and DEL) in its JSON strings
   * written as a `\uXXXX` escape, so the message needs no SMTPUTF8. `true`: non-ASCII stays raw UTF-8, for
   * senders whose SMTP sessions use SMTPUTF8 (RFC 6531). Either way the JSON means the same.
   */
  smtputf8?: boolean;
}

/** The value the SMTP helper writes: one that nodemailer's `headers` option takes (its own types and `@types/nodemailer`). */
export type MailgunSmtpHeaderValue = string | { prepared: boolean; value: string };

/** The caller's headers without their `X-Mailgun-Variables` (whatever its case), plus the one the SMTP helper writes. */
export type MailgunSmtpHeaders<T> = {
  [K in keyof T as K extends string ? (Lowercase<K> extends 'x-mailgun-variables' ? never : K) : K]: T[K];
} & { [name: string]: MailgunSmtpHeaderValue };

/**
 * Returns a copy of a Mailgun message (the fields of `POST /v3/{domain}/messages`) carrying the tracking ID
 * as the plain string `v:service_id` (or, with `via: 'header'`, merged into `h:X-Mailgun-Variables`).
 * Mailgun reports it in every event's `user-variables.service_id`. An ID holding CR or LF, which a
 * multipart body (Node's FormData, so mailgun.js) would turn into CRLF, or starting with U+FEFF, which a
 * multipart parser may drop as a byte-order mark, goes as base64url of its UTF-8 with
 * `v:service_id_enc=b64u`; `readMailgunTrackingId` decodes it. Any other ID goes as is.
 *
 * The header variant keeps the caller's other variables byte for byte, stays valid JSON, writes control
 * characters as JSON escapes and `=?` as `\u003d?` (never an RFC 2047 encoded word), and folds between
 * members when the header line would exceed 998 octets.
 *
 * With `options.stream`, the stream travels the same way, as `v:service_stream` (or the `service_stream`
 * member of the header), beside `service_id`.
 *
 * With `options.unsubscribe`, the message gets `h:List-Unsubscribe` and `h:List-Unsubscribe-Post` with
 * the link of its `to` recipient; with several `to` recipients, `h:List-Unsubscribe` is
 * `%recipient.h:List-Unsubscribe%` and each recipient's link goes in `recipient-variables` (merged into
 * any the message has), which makes Mailgun send each recipient a copy of its own (batch sending). Then
 * every recipient needs a link, or it throws `unsubscribe_not_carriable`.
 *
 * Throws `invalid_tracking_id` for an invalid ID, `invalid_stream` for an invalid stream, `invalid_request` when an `X-Mailgun-Variables` field is
 * not text, and `tracking_id_not_carriable` when the `o:`/`h:`/`v:` options would exceed Mailgun's 16 kB,
 * or (header variant) when the existing header is not a JSON object to merge into.
 *
 * @example
 * await mg.messages.create('mg.example.com', attachMailgunTrackingId({
 *   from: 'news@mg.example.com',
 *   to: ['jane@example.com'],
 *   subject: 'Hello',
 *   text: 'Hi',
 * }, 'welcome-2026'));
 */
export function attachMailgunTrackingId<T extends MailgunMessageFields>(
  fields: T,
  trackingId: string,
  options: MailgunCarrierOptions = {},
): T {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  const own = ownMember(stream);
  const via = options.via ?? 'variable';
  const pairs = fieldPairs(fields);
  const isHeader = (name: string) => name.toLowerCase() === headerField.toLowerCase();
  const unsubscribe = unsubscribeFields(pairs, options);
  const touched = (name: string) =>
    name === variableField ||
    name === encodingVariableField ||
    (stream !== undefined && name === streamVariableField) ||
    isHeader(name) ||
    unsubscribe.replaces(name);
  const headerName = pairs.find(([name]) => isHeader(name))?.[0] ?? headerField;
  const texts = pairs.filter(([name]) => isHeader(name)).map(([, value]) => headerText(value));
  const headers =
    via === 'header'
      ? mergeTrackingId(texts, [trackingMember(id), ...streamMembers(stream)], headerName, own)
      : texts.map((text) => withoutTrackingId(text, headerName, own));
  const variables: [string, string][] =
    via === 'variable' ? [...variableFields(id), ...(stream === undefined ? [] : [[streamVariableField, stream] as [string, string]])] : [];
  const added: [string, string][] = [...variables, ...headers.map((text): [string, string] => [headerName, text]), ...unsubscribe.fields];
  checkOptionsSize([...pairs.filter(([name]) => !touched(name)), ...added]);

  if (fields instanceof URLSearchParams || fields instanceof FormData) {
    const next = fields instanceof URLSearchParams ? new URLSearchParams() : new FormData();
    for (const [name, value] of fields.entries()) if (!touched(name)) next.append(name, value as string);
    for (const [name, value] of added) next.append(name, value);
    return next as T;
  }
  const next: Record<string, unknown> = Object.fromEntries(Object.entries(fields).filter(([name]) => !touched(name)));
  for (const [name, value] of variables) next[name] = value;
  if (headers.length > 0) next[headerName] = headers.length === 1 ? headers[0] : headers;
  for (const [name, value] of unsubscribe.fields) next[name] = value;
  return next as T;
}

const UNSUBSCRIBE_FIELD = `h:${LIST_UNSUBSCRIBE}`;
const UNSUBSCRIBE_POST_FIELD = `h:${LIST_UNSUBSCRIBE_POST}`;
const RECIPIENT_VARIABLES = 'recipient-variables';

/**
 * The fields that carry the unsubscribe link of each `to` recipient, and which of the message's fields
 * they replace: `h:List-Unsubscribe` and `h:List-Unsubscribe-Post` (any case), and `recipient-variables`
 * when there are several recipients, since Mailgun substitutes `%recipient.…%` in headers too.
 */
function unsubscribeFields(
  pairs: readonly [string, unknown][],
  options: UnsubscribeCarrierOptions,
): { fields: [string, string][]; replaces: (name: string) => boolean } {
  const none = { fields: [], replaces: () => false };
  if (options.unsubscribe === undefined) return none;
  const recipients = recipientAddresses(pairs.filter(([name]) => name === 'to').map(([, value]) => value));
  const isOurHeader = (name: string) => /^h:/i.test(name) && isUnsubscribeHeaderName(name.slice(2));
  if (recipients.length <= 1) {
    const headers = unsubscribeHeadersOf(options, recipients, 'The Mailgun message');
    if (headers === undefined) return none;
    return {
      fields: [
        [UNSUBSCRIBE_FIELD, headers[LIST_UNSUBSCRIBE]],
        [UNSUBSCRIBE_POST_FIELD, headers[LIST_UNSUBSCRIBE_POST]],
      ],
      replaces: isOurHeader,
    };
  }
  const variables = recipientVariables(pairs.filter(([name]) => name === RECIPIENT_VARIABLES).map(([, value]) => value));
  let post: string | undefined;
  for (const recipient of recipients) {
    const headers = unsubscribeHeadersOf(options, [recipient], `Mailgun recipient ${recipient}`);
    if (headers === undefined) {
      throw new MailwardenError(
        'unsubscribe_not_carriable',
        `The Mailgun message goes to several recipients and ${recipient} has no unsubscribe link; each copy carries one, so give every recipient a link or send it apart.`,
      );
    }
    const own = variables[recipient];
    variables[recipient] = { ...(isRecord(own) ? own : {}), [UNSUBSCRIBE_FIELD]: headers[LIST_UNSUBSCRIBE] };
    post = headers[LIST_UNSUBSCRIBE_POST];
  }
  return {
    fields: [
      [UNSUBSCRIBE_FIELD, `%recipient.${UNSUBSCRIBE_FIELD}%`],
      [UNSUBSCRIBE_POST_FIELD, post!],
      [RECIPIENT_VARIABLES, JSON.stringify(variables)],
    ],
    replaces: (name) => isOurHeader(name) || name === RECIPIENT_VARIABLES,
  };
}

/** The message's `recipient-variables` (JSON text, or an object), as one object to add to. */
function recipientVariables(values: readonly unknown[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const value of values) {
    let parsed: unknown = value;
    if (typeof value === 'string') {
      try {
        parsed = JSON.parse(value);
      } catch {
        parsed = undefined;
      }
    }
    if (!isRecord(parsed)) throw new MailwardenError('invalid_request', 'Mailgun recipient-variables must be a JSON object of recipients.');
    Object.assign(merged, parsed);
  }
  return merged;
}

/**
 * Returns a copy of the headers of an SMTP message sent through Mailgun (nodemailer's `headers` option)
 * with the tracking ID merged into the `X-Mailgun-Variables` JSON header, found whatever its case (several
 * such headers become one). The header is 7-bit (non-ASCII as `\uXXXX` escapes) unless `smtputf8` is set,
 * holds no `=?` that a receiver could take for an RFC 2047 encoded word (written `\u003d?`), and is folded
 * between JSON members so no line exceeds 998 octets. The caller's other variables keep their JSON values
 * and are otherwise written as given. An ID whose escaped JSON would not fit one line goes as base64url of
 * its UTF-8 with `service_id_enc: "b64u"`, which `readMailgunTrackingId` decodes.
 *
 * With `options.stream`, a `service_stream` member too.
 *
 * Throws `invalid_tracking_id` for an invalid ID, `invalid_stream` for an invalid stream, `invalid_request` for headers given as an array, and
 * `tracking_id_not_carriable` when an existing `X-Mailgun-Variables` value is not a JSON object.
 *
 * @example
 * await transport.sendMail({
 *   from: 'news@mg.example.com',
 *   to: 'jane@example.com',
 *   subject: 'Hello',
 *   text: 'Hi',
 *   headers: attachMailgunSmtpTrackingId({ 'X-Campaign': 'spring' }, 'welcome-2026'),
 * });
 */
export function attachMailgunSmtpTrackingId<T extends object>(
  headers: T | undefined,
  trackingId: string,
  options: MailgunSmtpCarrierOptions = {},
): MailgunSmtpHeaders<T> {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  const own = ownMember(stream);
  if (Array.isArray(headers)) {
    throw new MailwardenError('invalid_request', 'Pass the SMTP headers as an object of header names to values.');
  }
  const source = (headers ?? {}) as Record<string, unknown>;
  const isVariables = (name: string) => name.toLowerCase() === MAILGUN_VARIABLES_HEADER.toLowerCase();
  const name = Object.keys(source).find(isVariables) ?? MAILGUN_VARIABLES_HEADER;
  const next: Record<string, unknown> = Object.fromEntries(Object.entries(source).filter(([key]) => !isVariables(key)));
  const texts = Object.entries(source)
    .filter(([key]) => isVariables(key))
    .flatMap(([, value]) => (Array.isArray(value) ? (value as unknown[]) : [value]))
    .map((item) => headerText(isRecord(item) ? item['value'] : item));
  const sevenBit = options.smtputf8 !== true;
  // One header: nodemailer's types take a list of plain strings only, and Mailgun merges the variables anyway.
  const members = texts
    .flatMap(mergeableMembers)
    .filter((member) => !own(member))
    .map((member) => smtpMember(member, sevenBit));
  const value = foldMembers([...members, ...smtpTrackingMembers(id, name, sevenBit), ...streamMembers(stream)], name);
  next[name] = options.prepared === false ? value : { prepared: true, value };
  return next as MailgunSmtpHeaders<T>;
}

/**
 * The tracking ID of a Mailgun event: `user-variables.service_id` of the `event-data` object (the whole
 * webhook body is accepted too). Strings come back as sent, base64url-decoded when `service_id_enc` is
 * `b64u`; a number set through the JSON header as its decimal string (docs/providers/mailgun.md#carrier-limits-and-encodings); `null` when absent,
 * empty or of another type, or when the encoding is unknown or the value does not decode.
 *
 * A double-encoded string (`"\"abc\""`, written by some client libraries) is NOT unwrapped: a tracking ID
 * may itself start and end with a quote, and unwrapping would return a different string than was sent.
 *
 * @example
 * const trackingId = readMailgunTrackingId(JSON.parse(body)['event-data']);
 */
export function readMailgunTrackingId(eventData: unknown): string | null {
  const data = isRecord(eventData) && isRecord(eventData['event-data']) ? eventData['event-data'] : eventData;
  if (!isRecord(data) || !isRecord(data['user-variables'])) return null;
  const variables = data['user-variables'];
  return trackingIdOf(variables['service_id'], variables[MAILGUN_SERVICE_ID_ENCODING_VARIABLE]);
}

/**
 * The tracking ID of a legacy (form-encoded) Mailgun webhook, where user variables are merged in as form
 * fields: the first `service_id` field (decoded when the first `service_id_enc` is `b64u`). No Mailgun
 * field has either name, so there is no collision to undo.
 *
 * @example
 * const trackingId = readMailgunLegacyTrackingId([...new URLSearchParams(body)]);
 */
export function readMailgunLegacyTrackingId(fields: readonly (readonly [string, string])[]): string | null {
  const value = (name: string) => fields.find(([field]) => field === name)?.[1];
  return trackingIdOf(value('service_id'), value(MAILGUN_SERVICE_ID_ENCODING_VARIABLE));
}

/**
 * The stream of a Mailgun event: `user-variables.service_stream` of the `event-data` object (the whole
 * webhook body is accepted too); `null` when absent.
 *
 * @example
 * const stream = readMailgunStream(JSON.parse(body)['event-data']);
 */
export function readMailgunStream(eventData: unknown): string | null {
  const data = isRecord(eventData) && isRecord(eventData['event-data']) ? eventData['event-data'] : eventData;
  if (!isRecord(data) || !isRecord(data['user-variables'])) return null;
  return carriedStream(data['user-variables'][SERVICE_STREAM_KEY]);
}

/**
 * The stream of a legacy (form-encoded) Mailgun webhook: the first `service_stream` field; `null` when absent.
 *
 * @example
 * const stream = readMailgunLegacyStream([...new URLSearchParams(body)]);
 */
export function readMailgunLegacyStream(fields: readonly (readonly [string, string])[]): string | null {
  return carriedStream(fields.find(([field]) => field === SERVICE_STREAM_KEY)?.[1]);
}

/** `service_id` as sent, or decoded when `service_id_enc` is `b64u`; `null` for another encoding or a value that does not decode. */
function trackingIdOf(value: unknown, encoding: unknown): string | null {
  if (encoding === undefined) return metadataTrackingId(value);
  return encoding === BASE64URL_ID_ENCODING && typeof value === 'string' ? decodeBase64urlId(value) : null;
}

/** Every field as a name/value pair, array values of a plain object spread into repeated fields. */
function fieldPairs(fields: MailgunMessageFields): [string, unknown][] {
  if (fields instanceof URLSearchParams || fields instanceof FormData) return [...fields.entries()];
  return Object.entries(fields).flatMap(([name, value]): [string, unknown][] =>
    Array.isArray(value) ? value.map((item: unknown): [string, unknown] => [name, item]) : [[name, value]],
  );
}

function headerText(value: unknown): string {
  if (typeof value === 'string') return value;
  throw new MailwardenError('invalid_request', `${MAILGUN_VARIABLES_HEADER} must be a JSON text.`);
}

/**
 * `v:service_id` with the ID as is, or, for an ID holding CR or LF or starting with U+FEFF, base64url of
 * its UTF-8 plus `v:service_id_enc=b64u`: a multipart/form-data body (Node's FormData, and so mailgun.js)
 * turns a bare CR or LF into CRLF, and a multipart parser that decodes each value as UTF-8 (undici's,
 * so Node's `Response.formData()`) drops a leading U+FEFF as a byte-order mark: such an ID would not come
 * back as sent.
 */
function variableFields(id: string): [string, string][] {
  if (!/[\r\n]/.test(id) && !id.startsWith('\ufeff')) return [[variableField, id]];
  return [
    [variableField, encodeBase64urlId(id)],
    [encodingVariableField, BASE64URL_ID_ENCODING],
  ];
}

/** Our `service_id` member (written last, so the caller's members stay first). */
function trackingMember(id: string): string {
  return `"service_id":${headerJsonString(id)}`;
}

/** Our `service_stream` member, when there is a stream (a stream name needs no escaping). */
function streamMembers(stream: string | undefined): string[] {
  return stream === undefined ? [] : [`"${SERVICE_STREAM_KEY}":"${stream}"`];
}

/**
 * `service_id` and its encoding marker, and `service_stream` when a stream is written: the members the
 * helpers own, replaced whatever the caller put there.
 */
function ownMember(stream: string | undefined): (member: JsonMemberText) => boolean {
  return ({ name }) =>
    name === 'service_id' || name === MAILGUN_SERVICE_ID_ENCODING_VARIABLE || (stream !== undefined && name === SERVICE_STREAM_KEY);
}

/** The texts of the variables headers with our members merged into the first (or a new header when none). */
function mergeTrackingId(
  texts: readonly string[],
  ours: readonly string[],
  name: string,
  own: (member: JsonMemberText) => boolean,
): string[] {
  if (texts.length === 0) return [foldMembers(ours, name)];
  return texts.map((text, index) => {
    const members = mergeableMembers(text);
    const others = members.filter((member) => !own(member)).map((member) => member.text);
    return index === 0 ? foldMembers([...others, ...ours], name) : others.length === members.length ? text : foldMembers(others, name);
  });
}

/** The members of an existing variables header, or `tracking_id_not_carriable` when it is not a JSON object. */
function mergeableMembers(text: string): JsonMemberText[] {
  const members = jsonObjectMembers(text);
  if (members === undefined) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `The existing ${MAILGUN_VARIABLES_HEADER} is not a JSON object, so service_id cannot be merged into it; ` +
        'fix that header or carry the tracking ID in the v:service_id field.',
    );
  }
  return members;
}

/**
 * Our members of the SMTP header: `service_id` as a JSON string; when that does not fit one line even
 * alone (7-bit, over about 80 astral characters, each written `\ud83d\ude00`), base64url of the ID's UTF-8
 * (at most 683 characters) with `service_id_enc: "b64u"`.
 */
function smtpTrackingMembers(id: string, name: string, sevenBit: boolean): string[] {
  const plain = smtpSafe(trackingMember(id), sevenBit);
  if (Buffer.byteLength(`${name}: {${plain}}`, 'utf8') <= MAILGUN_HEADER_LINE_MAX_BYTES) return [plain];
  return [`"service_id":"${encodeBase64urlId(id)}"`, `"${MAILGUN_SERVICE_ID_ENCODING_VARIABLE}":"${BASE64URL_ID_ENCODING}"`];
}

/**
 * A JSON member as a header must carry it: `=?` written `\u003d?` (a receiver could decode it as the start
 * of an RFC 2047 encoded word), and, for 7-bit, every character from DEL up as `\uXXXX`. In valid JSON both
 * occur only inside strings, where the escape means the same character: the JSON value is unchanged.
 */
function smtpSafe(json: string, sevenBit: boolean): string {
  const guarded = guardEncodedWords(json);
  return sevenBit ? guarded.replace(/[\u007f-\uffff]/g, unicodeEscape) : guarded;
}

/**
 * A caller's member as the SMTP header carries it. Refuses (`invalid_request`) one that fitted a line as
 * UTF-8 but not once escaped to 7-bit: it cannot be folded (a JSON string is one token), and the caller
 * can send with SMTPUTF8 or shorten it. One over-long as given is left to the caller, as it always was.
 */
function smtpMember(member: JsonMemberText, sevenBit: boolean): string {
  const written = smtpSafe(member.text, sevenBit);
  const fits = (text: string) => Buffer.byteLength(text, 'utf8') + 3 <= MAILGUN_HEADER_LINE_MAX_BYTES;
  if (!fits(written) && fits(member.text)) {
    throw new MailwardenError(
      'invalid_request',
      `The ${MAILGUN_VARIABLES_HEADER} variable ${JSON.stringify(member.name)} takes ${Buffer.byteLength(written, 'utf8')} octets ` +
        `written 7-bit (non-ASCII as \\uXXXX), over a ${MAILGUN_HEADER_LINE_MAX_BYTES}-octet header line; shorten it, or pass ` +
        '{ smtputf8: true } if your SMTP sessions use SMTPUTF8.',
    );
  }
  return written;
}

function guardEncodedWords(json: string): string {
  return json.replaceAll('=?', '\\u003d?');
}

function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** A variables text without its `service_id` member; texts without one (or not JSON) are kept as they are. */
function withoutTrackingId(text: string, name: string, own: (member: JsonMemberText) => boolean): string {
  const members = jsonObjectMembers(text);
  if (members === undefined) return text;
  const others = members.filter((member) => !own(member)).map((member) => member.text);
  return others.length === members.length ? text : foldMembers(others, name);
}

/**
 * JSON, with DEL and the C1 controls escaped too (JSON.stringify escapes only C0): control characters
 * do not belong in a header line. `=?` is written `\u003d?`, so no receiver decodes it as an RFC 2047
 * encoded word. Other characters stay literal, so 128 code points take at most 770 octets and always
 * fit one line.
 */
function headerJsonString(text: string): string {
  return guardEncodedWords(JSON.stringify(text).replace(/[\u007f-\u009f]/g, unicodeEscape));
}

/**
 * `{member,member,…}` on one line while `Name: value` fits 998 octets, else folded (CRLF + space) before
 * the member that would overflow: white space between JSON tokens, so the JSON means the same folded or not.
 */
function foldMembers(members: readonly string[], name: string): string {
  const pieces =
    members.length === 0 ? ['{}'] : members.map((member, i) => `${i === 0 ? '{' : ','}${member}${i === members.length - 1 ? '}' : ''}`);
  let value = '';
  let lineBytes = Buffer.byteLength(`${name.replace(/^h:/i, '')}: `, 'utf8');
  for (const piece of pieces) {
    const bytes = Buffer.byteLength(piece, 'utf8');
    if (value !== '' && lineBytes + bytes > MAILGUN_HEADER_LINE_MAX_BYTES) {
      value += '\r\n ';
      lineBytes = 1;
    }
    value += piece;
    lineBytes += bytes;
  }
  return value;
}

/**
 * Mailgun's 16 kB of `o:`/`h:`/`v:` options, counted as sent: the UTF-8 bytes of every name and value, the
 * folding white space in `X-Mailgun-Variables` too, ours included (Mailgun receives those bytes), so what
 * the helper lets through Mailgun takes (docs/providers/mailgun.md#carrier-limits-and-encodings).
 */
function checkOptionsSize(pairs: readonly [string, unknown][]): void {
  let bytes = 0;
  for (const [name, value] of pairs) {
    if (!/^[ohv]:/i.test(name)) continue;
    bytes += Buffer.byteLength(name, 'utf8') + valueBytes(value);
  }
  if (bytes > MAILGUN_OPTIONS_MAX_BYTES) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `Mailgun's o:, h: and v: options would be ${bytes} bytes, over its 16 kB limit; send through Mailgun's ` +
        'SMTP service with the X-Mailgun-Variables header (attachMailgunSmtpTrackingId), or shrink the other options.',
    );
  }
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (value instanceof Blob) return value.size;
  return Buffer.byteLength(JSON.stringify(value) ?? String(value), 'utf8');
}
