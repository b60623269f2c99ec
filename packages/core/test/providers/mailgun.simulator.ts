/**
 * Stand-ins for what Mailgun does with a send request: the user variables its webhooks will report, or
 * the refusal. The webhooks themselves come from the testing kit (`src/testing/mailgun.ts`).
 */

/** What Mailgun (or the client library on the way) refuses, or could not make sense of. */
export class MailgunRefusal extends Error {}

/**
 * The user variables Mailgun reports for a message sent through `POST /v3/{domain}/messages` with these
 * fields, as `mailgun.js` with Node's FormData sends them: empty strings are dropped, numbers and objects
 * throw. Refuses over 16 kB of `o:`/`h:`/`v:` options, an `X-Mailgun-Variables` that is not a JSON object
 * or has a header line over 998 octets, and (stricter than Mailgun, whose precedence is undocumented) a
 * variable given two different values.
 */
export function mailgunApiUserVariables(fields: object): Record<string, unknown> {
  const pairs: [string, unknown][] =
    fields instanceof URLSearchParams || fields instanceof FormData
      ? [...fields.entries()]
      : Object.entries(fields).flatMap(([name, value]): [string, unknown][] =>
          Array.isArray(value) ? value.map((item: unknown): [string, unknown] => [name, item]) : [[name, value]],
        );
  let optionBytes = 0;
  const headerTexts: string[] = [];
  const variables: [string, string][] = [];
  for (const [name, value] of pairs) {
    if (typeof value !== 'string') throw new MailgunRefusal(`${name}: FormData takes only strings`);
    if (value === '') continue;
    if (/^[ohv]:/i.test(name)) optionBytes += utf8Bytes(name) + utf8Bytes(value);
    if (name.toLowerCase() === 'h:x-mailgun-variables') headerTexts.push(checkHeaderLines(name.slice(2), value));
    else if (name.startsWith('v:')) variables.push([name.slice(2), value]);
  }
  if (optionBytes > 16_384) throw new MailgunRefusal(`${optionBytes} bytes of options`);
  return combine(headerTexts, variables);
}

/**
 * The user variables Mailgun reports for a message sent over SMTP by nodemailer with these `headers`. A
 * value that is not `{ prepared: true }` and holds a quote or non-ASCII is RFC 2047-encoded by nodemailer,
 * which Mailgun cannot parse as JSON: refused, as are lines over 998 octets.
 */
export function mailgunSmtpUserVariables(headers: Record<string, unknown>): Record<string, unknown> {
  const texts: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'x-mailgun-variables') continue;
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
      const prepared = typeof item === 'object' && item !== null && (item as { prepared?: unknown }).prepared === true;
      const text = prepared ? (item as { value: unknown }).value : item;
      if (typeof text !== 'string') throw new MailgunRefusal(`${name} is not text`);
      if (!prepared && /["\u0080-\uffff]/.test(text)) throw new MailgunRefusal(`nodemailer would RFC 2047-encode ${name}`);
      texts.push(checkHeaderLines(name, text));
    }
  }
  return combine(texts, []);
}

/** Every physical line of `Name: value` within 998 octets; returns the value unfolded (RFC 5322 §2.2.3). */
function checkHeaderLines(name: string, value: string): string {
  const lines = `${name}: ${value}`.split('\r\n');
  lines.forEach((line, index) => {
    if (utf8Bytes(line) > 998) throw new MailgunRefusal(`${name} has a line of ${utf8Bytes(line)} octets`);
    if (/[\r\n]/.test(line)) throw new MailgunRefusal(`${name} has a bare CR or LF`);
    if (index > 0 && !/^[ \t]/.test(line)) throw new MailgunRefusal(`${name} has a continuation line without white space`);
  });
  return value.replace(/\r\n(?=[ \t])/g, '');
}

function combine(headerTexts: readonly string[], variables: readonly [string, string][]): Record<string, unknown> {
  const combined = new Map<string, unknown>();
  const put = (name: string, value: unknown) => {
    if (combined.has(name) && JSON.stringify(combined.get(name)) !== JSON.stringify(value)) {
      throw new MailgunRefusal(`variable ${name} is given two values`);
    }
    combined.set(name, value);
  };
  for (const text of headerTexts) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new MailgunRefusal('X-Mailgun-Variables is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new MailgunRefusal('X-Mailgun-Variables is not an object');
    for (const [name, value] of Object.entries(parsed)) put(name, value);
  }
  for (const [name, value] of variables) put(name, value);
  return Object.fromEntries(combined);
}

function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}
