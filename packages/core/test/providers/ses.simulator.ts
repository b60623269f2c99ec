import { readFileSync } from 'node:fs';
import { sesMessageId, type SentMessage } from '../../src/testing/ses.js';

/**
 * A stand-in for the SES send APIs: it accepts send requests the way they do (refusing what they
 * refuse) and says what SES's notifications will report about the sent message. The notifications and
 * their SNS envelopes come from the testing kit (`src/testing/ses.ts`).
 */

/** The certificate of another key: signatures by the test key must not verify against it. */
export const otherCertificate = readFileSync(new URL('./fixtures/ses/other-cert.pem', import.meta.url), 'utf8');

/** What SES refuses (the real API answers 400 `InvalidParameterValue` / `ValidationException`). */
export class SesRejection extends Error {
  override readonly name = 'SesRejection';
}

/** `MessageTag` Name and Value: ASCII letters, digits, `_`, `-`; 1–256 characters (API_MessageTag). */
const TAG_TEXT = /^[A-Za-z0-9_-]{1,256}$/;
/** `MessageHeader` Name: printable ASCII but `:`, 1–126; Value: printable ASCII, 1–870 (API_MessageHeader). */
const HEADER_NAME = /^[!-9;-@A-~]{1,126}$/;
const HEADER_VALUE = /^[ -~]{1,870}$/;
/** `Message.Headers` / `Template.Headers` hold at most 15 entries. */
const MAX_HEADERS = 15;
/** RFC 5322 §2.1.1: a line is at most 998 characters, CRLF excluded. */
const MAX_LINE = 998;

const baseHeaders = (to: string[]): { name: string; value: string }[] => [
  { name: 'From', value: 'Shop <shop@example.com>' },
  { name: 'To', value: to.join(', ') },
  { name: 'Subject', value: 'Hello' },
  { name: 'MIME-Version', value: '1.0' },
];

/** SES v2 `SendEmail` (`@aws-sdk/client-sesv2`): `EmailTags`, `Content.Simple|Template.Headers`. */
export function sesV2SendEmail(request: Record<string, unknown>): SentMessage {
  const destination = destinationOf(request.Destination);
  // The SDK drops fields it does not know (`Tags` is v1's name): they never reach SES.
  const tags = messageTags(request.EmailTags);
  const content = request.Content as Record<string, unknown> | undefined;
  const part = (content?.Simple ?? content?.Template) as Record<string, unknown> | undefined;
  if (part === undefined) throw new SesRejection('Content.Simple or Content.Template is required');
  const extra = part.Headers ?? [];
  if (!Array.isArray(extra) || extra.length > MAX_HEADERS) throw new SesRejection('Headers: at most 15');
  const headers = baseHeaders(destination);
  for (const header of extra as unknown[]) {
    const { Name, Value } = header as Record<string, unknown>;
    if (typeof Name !== 'string' || !HEADER_NAME.test(Name)) throw new SesRejection(`header name ${String(Name)}`);
    if (typeof Value !== 'string' || !HEADER_VALUE.test(Value)) throw new SesRejection(`header value ${JSON.stringify(Value)}`);
    headers.push({ name: Name, value: Value });
  }
  return { messageId: sesMessageId(), destination, headers, tags };
}

/** SES v1 `SendEmail` (`@aws-sdk/client-ses`): tags in `Tags`; no custom headers. */
export function sesV1SendEmail(request: Record<string, unknown>): SentMessage {
  const destination = destinationOf(request.Destination);
  return { messageId: sesMessageId(), destination, headers: baseHeaders(destination), tags: messageTags(request.Tags) };
}

/** SES v1 `SendRawEmail`: the MIME text in `RawMessage.Data`, tags in `Tags`; headers as written. */
export function sesV1SendRawEmail(request: Record<string, unknown>): SentMessage {
  const raw = (request.RawMessage as Record<string, unknown> | undefined)?.Data;
  if (typeof raw !== 'string' && !(raw instanceof Uint8Array)) throw new SesRejection('RawMessage.Data is required');
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw);
  const headers = mimeHeaders(bytes);
  const to = headers.find((header) => header.name.toLowerCase() === 'to')?.value;
  const destination = Array.isArray(request.Destinations) ? (request.Destinations as string[]) : (to ?? '').split(/,\s*/);
  return { messageId: sesMessageId(), destination, headers, tags: messageTags(request.Tags) };
}

/** A raw MIME message as a mail client would build it, ready for `attachSesHeaderTrackingId`. */
export function mimeMessage(to: string[], newline = '\r\n'): string {
  return [
    ...baseHeaders(to).map(({ name, value }) => `${name}: ${value}`),
    'Content-Type: text/plain; charset=UTF-8',
    '',
    'Hello,',
    '',
    'a body line',
    '',
  ].join(newline);
}

function destinationOf(destination: unknown): string[] {
  const to = (destination as Record<string, unknown> | undefined)?.ToAddresses;
  return Array.isArray(to) && to.length > 0 ? (to as string[]) : ['ana@example.org'];
}

function messageTags(tags: unknown): Record<string, string[]> {
  if (tags === undefined) return {};
  if (!Array.isArray(tags)) throw new SesRejection('tags must be a list');
  const result: Record<string, string[]> = {};
  for (const tag of tags as unknown[]) {
    const { Name, Value } = tag as Record<string, unknown>;
    if (typeof Name !== 'string' || !TAG_TEXT.test(Name)) throw new SesRejection(`tag name ${JSON.stringify(Name)}`);
    if (typeof Value !== 'string' || !TAG_TEXT.test(Value)) throw new SesRejection(`tag value ${JSON.stringify(Value)}`);
    if (result[Name] !== undefined) throw new SesRejection(`duplicate tag ${Name}`);
    result[Name] = [Value];
  }
  return result;
}

/**
 * The header fields of a raw message as SES reports them: header block in ASCII with lines of at
 * most 998 characters (else refused), folding undone, the value after the colon without leading blanks.
 */
function mimeHeaders(bytes: Buffer): { name: string; value: string }[] {
  const text = bytes.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const block = end === -1 ? text : text.slice(0, end);
  if (/[^\x00-\x7f]/.test(block)) throw new SesRejection('header block is not ASCII');
  const lines = block.split(/\r?\n/);
  if (lines.some((line) => line.length > MAX_LINE)) throw new SesRejection('header line over 998 characters');
  const headers: { name: string; value: string }[] = [];
  for (const line of lines) {
    if (/^[ \t]/.test(line) && headers.length > 0) headers[headers.length - 1]!.value += line;
    else {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new SesRejection(`malformed header line ${JSON.stringify(line)}`);
      headers.push({ name: line.slice(0, colon), value: line.slice(colon + 1).replace(/^[ \t]+/, '') });
    }
  }
  return headers;
}
