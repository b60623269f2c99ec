import { MailwardenError } from '../errors.js';
import { isRecord } from '../json/record.js';

/** The two headers of a one-click unsubscribe (RFC 8058), as `unsubscribeLinks.create` and `POST …/unsubscribe-links` answer them. */
export const LIST_UNSUBSCRIBE = 'List-Unsubscribe';
export const LIST_UNSUBSCRIBE_POST = 'List-Unsubscribe-Post';

/** A one-click unsubscribe link as far as a message carries it: its two headers. */
export interface UnsubscribeLinkHeaders {
  headers: { readonly 'List-Unsubscribe': string; readonly 'List-Unsubscribe-Post': string };
}

/**
 * The link of each recipient: called with a recipient's address as the request writes it (without a
 * display name), it answers that recipient's link (`{ url, headers }` from `unsubscribeLinks.create`, or
 * the JSON of `POST …/unsubscribe-links`), or `undefined` for a recipient that gets none.
 *
 * @example
 * // In process:
 * const unsubscribe = (email: string) => mailwarden.unsubscribeLinks.create('acme', { email, stream: 'marketing' });
 * // Over HTTP: make the links first, then look them up.
 * const links = new Map(await Promise.all(recipients.map(async (email) => [email, await makeLink(email)] as const)));
 * const unsubscribe = (email: string) => links.get(email);
 */
export type UnsubscribeLinkOf = (recipient: string) => UnsubscribeLinkHeaders | undefined;

/** What the attach helpers that can carry a one-click unsubscribe take beside the stream. */
export interface UnsubscribeCarrierOptions {
  /**
   * Adds `List-Unsubscribe` and `List-Unsubscribe-Post` to each message, with the link of the one
   * recipient the message goes to (docs/providers/README.md, "One-click unsubscribe on the send side").
   * A message that goes to several recipients who would all see the same headers throws
   * `unsubscribe_not_carriable`.
   */
  unsubscribe?: UnsubscribeLinkOf | undefined;
}

/** The address of a recipient as a request writes it: `a@x`, `Ana <a@x>`, `{ email }`, `{ Email }`, `{ address }`. */
export function recipientAddress(value: unknown): string | undefined {
  if (typeof value === 'string') {
    const angle = /<([^<>]*)>\s*$/.exec(value);
    const address = (angle?.[1] ?? value).trim();
    return address === '' ? undefined : address;
  }
  if (!isRecord(value)) return undefined;
  for (const key of ['email', 'Email', 'address']) {
    const field = value[key];
    if (field !== undefined) return recipientAddress(field);
  }
  return undefined;
}

/**
 * A list of recipients as a request writes it: one string that may hold several (`a@x, Ana <b@y>`), a
 * recipient, or an array of them. Commas inside quotes or angle brackets do not split.
 */
export function recipientAddresses(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.flatMap(recipientAddresses);
  if (typeof value === 'string') return splitAddressList(value).flatMap((one) => recipientAddress(one) ?? []);
  const address = recipientAddress(value);
  return address === undefined ? [] : [address];
}

function splitAddressList(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  let angle = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (char === '<' && !quoted) angle = true;
    else if (char === '>' && !quoted) angle = false;
    if (char === ',' && !quoted && !angle) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts.filter((part) => part.trim() !== '');
}

/**
 * The unsubscribe headers of one message: those of the link `options.unsubscribe` answers for its one
 * recipient; `undefined` when there is no `unsubscribe` option, no recipient, or no link for it. Throws
 * `unsubscribe_not_carriable` when the message goes to several recipients (`where` says which message
 * and what to do), and `invalid_request` for a link whose headers are not two single-line strings.
 */
export function unsubscribeHeadersOf(
  options: UnsubscribeCarrierOptions | undefined,
  recipients: readonly string[],
  where: string,
): Readonly<Record<typeof LIST_UNSUBSCRIBE | typeof LIST_UNSUBSCRIBE_POST, string>> | undefined {
  const linkOf = options?.unsubscribe;
  if (linkOf === undefined || recipients.length === 0) return undefined;
  if (recipients.length > 1) {
    throw new MailwardenError(
      'unsubscribe_not_carriable',
      `${where} goes to ${recipients.length} recipients who all see the same headers, so it cannot carry each one's unsubscribe link; ${FIX}`,
    );
  }
  const link = linkOf(recipients[0]!);
  if (link === undefined) return undefined;
  const headers = isRecord(link) && isRecord(link.headers) ? link.headers : undefined;
  const value = headers?.[LIST_UNSUBSCRIBE];
  const post = headers?.[LIST_UNSUBSCRIBE_POST];
  if (!isHeaderValue(value) || !isHeaderValue(post)) {
    throw new MailwardenError(
      'invalid_request',
      `The unsubscribe link of ${where} has no "${LIST_UNSUBSCRIBE}" and "${LIST_UNSUBSCRIBE_POST}" headers of one line each; pass what unsubscribeLinks.create answers.`,
    );
  }
  return { [LIST_UNSUBSCRIBE]: value, [LIST_UNSUBSCRIBE_POST]: post };
}

const FIX = 'send one message per recipient (docs/providers/README.md, "One-click unsubscribe on the send side").';

function isHeaderValue(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !/[\r\n]/.test(value);
}

/** Whether a header name is one of the two this module writes (names match case-insensitively). */
export function isUnsubscribeHeaderName(name: unknown): boolean {
  if (typeof name !== 'string') return false;
  const lower = name.toLowerCase();
  return lower === 'list-unsubscribe' || lower === 'list-unsubscribe-post';
}
