import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachMailgunSmtpTrackingId, attachMailgunTrackingId } from '../../src/carriers/mailgun.js';
import { MailwardenError } from '../../src/errors.js';
import { deliveryEventSchema } from '../../src/api-schemas.js';
import { createMailgunWebhook, parseMailgunLegacyWebhook, parseMailgunWebhook } from '../../src/webhooks/mailgun.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookReceipt } from '../../src/webhooks/receipt.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { mailgunJsonWebhook, mailgunLegacyWebhook, type MailgunDelivery } from '../../src/testing/mailgun.js';
import { mailgunApiUserVariables, mailgunSmtpUserVariables } from './mailgun.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

const now = Date.parse('2026-01-01T00:00:00Z');
const env: WebhookEnvironment = {
  now: () => now,
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const signingKey = randomBytes(16).toString('hex');
const auth = { signingKey };
const webhook = createMailgunWebhook(env);
const delivery: MailgunDelivery = { event: 'delivered', recipient: 'jane@example.com', timestamp: Math.floor(now / 1000), signingKey };

const request = (rawBody: Uint8Array, form: boolean): WebhookRequest => ({
  method: 'POST',
  headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
  rawBody,
});

/** The caller's own X-Mailgun-Variables (other variables, sometimes long enough to force folding). */
const existingVariables = fc.option(
  fc.dictionary(
    fc.string({ minLength: 1, maxLength: 10 }).filter((key) => key !== 'service_id' && key !== 'service_stream'),
    fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.integer(),
      fc.nat({ max: 900 }).map((n) => 'v'.repeat(n)),
    ),
    { maxKeys: 4 },
  ),
  { nil: undefined },
);

/** Other `o:`/`h:` options, sometimes big enough to reach the 16 kB limit. */
const otherOptions = fc.nat({ max: 16_400 }).map((size) => (size === 0 ? {} : { 'h:X-Filler': 'f'.repeat(size) }));

const carrier = fc.constantFrom('variable', 'header', 'smtp');

/**
 * The caller's own header as a careful caller writes it: compact, or folded after each member when the line
 * would exceed 998 octets. (Counterexample: an unfolded 999-octet line of the generator's own making, which
 * Mailgun refuses and the helper rightly leaves alone; pinned in mailgun.test.ts.)
 */
function callerHeaderText(variables: Record<string, unknown>): string {
  const compact = JSON.stringify(variables);
  if (Buffer.byteLength(`X-Mailgun-Variables: ${compact}`) <= 998) return compact;
  return `{${Object.entries(variables)
    .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
    .join(',\r\n ')}}`;
}

/**
 * Mailgun's 16 kB counted independently of the helper, with the smallest encoding the carrier allows:
 * UTF-8 bytes of every o:/h:/v: name and value as sent, the ID plain in `v:service_id` beside the caller's
 * header as given, or (header carrier) one more compact member in the caller's JSON, control characters
 * escaped since a header line cannot hold them, folded only where the 998-octet line forces it.
 */
function smallestOptionBytes(
  fields: Record<string, unknown>,
  existing: object | undefined,
  id: string,
  via: 'variable' | 'header',
  stream: string | undefined,
): number {
  const options = Object.entries(fields)
    .filter(([name]) => /^[ho]:/i.test(name) && name !== 'h:X-Mailgun-Variables')
    .reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(String(value)), 0);
  const callerText = fields['h:X-Mailgun-Variables'];
  if (via === 'variable') {
    const header = callerText === undefined ? 0 : Buffer.byteLength('h:X-Mailgun-Variables') + Buffer.byteLength(String(callerText));
    // An ID with CR or LF or a leading U+FEFF can only go base64url-encoded, with its marker (a multipart body
    // would change it otherwise). Counterexample: "\ufeff  \u0800😀        " just under the limit was refused.
    const idBytes =
      /[\r\n]/.test(id) || id.startsWith('\ufeff')
        ? Buffer.from(id, 'utf8').toString('base64url').length + Buffer.byteLength('v:service_id_encb64u')
        : Buffer.byteLength(id);
    const streamBytes = stream === undefined ? 0 : Buffer.byteLength(`v:service_stream${stream}`);
    return options + header + Buffer.byteLength('v:service_id') + idBytes + streamBytes;
  }
  // `=?` is escaped too (\u003d?): a receiver could otherwise decode it as an RFC 2047 encoded word.
  const ours = `"service_id":${JSON.stringify(id)
    .replace(/[\u007f-\u009f]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)
    .replaceAll('=?', '\\u003d?')}`;
  const members = [
    ...Object.entries(existing ?? {}).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`),
    ours,
    ...(stream === undefined ? [] : [`"service_stream":"${stream}"`]),
  ];
  return options + Buffer.byteLength('h:X-Mailgun-Variables') + foldedObjectBytes(members);
}

/**
 * The bytes of `{member,member,…}` in an `X-Mailgun-Variables` header, plus 3 (CRLF and a space) for each
 * fold: the fewest a 998-octet line allows, each line filled before the next begins. Counterexample: a
 * caller's 983-octet line left no room for `service_id`, the helper's fold was not counted, and Mailgun
 * got 16,385 bytes of options.
 */
function foldedObjectBytes(members: readonly string[]): number {
  let bytes = 0;
  let line = Buffer.byteLength('X-Mailgun-Variables: ');
  members.forEach((member, i) => {
    const piece = 1 + Buffer.byteLength(member) + (i === members.length - 1 ? 1 : 0); // `{` or `,`, and the last `}`
    if (i > 0 && line + piece > 998) {
      bytes += 3;
      line = 1;
    }
    bytes += piece;
    line += piece;
  });
  return bytes;
}

describe('Mailgun carrier round trip (the carrier law of docs/decisions.md)', () => {
  it('attach → Mailgun → signed JSON and legacy webhooks → receive gives back exactly the tracking ID and the stream', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(trackingIdArbitrary, maxLengthTrackingIdArbitrary),
        optionalStreamArbitrary,
        carrier,
        existingVariables,
        otherOptions,
        async (id, stream, via, existing, options) => {
          const callerText = existing === undefined ? undefined : callerHeaderText(existing);
          const existingHeader = callerText === undefined ? {} : { 'h:X-Mailgun-Variables': callerText };
          let variables: Record<string, unknown>;
          if (via === 'smtp') {
            const headers = callerText === undefined ? {} : { 'X-Mailgun-Variables': { prepared: true, value: callerText } };
            variables = mailgunSmtpUserVariables(
              stream === undefined ? attachMailgunSmtpTrackingId(headers, id) : attachMailgunSmtpTrackingId(headers, id, { stream }),
            );
          } else {
            const fields = { from: 'news@mg.example.com', to: 'jane@example.com', ...options, ...existingHeader };
            let attached;
            try {
              attached = attachMailgunTrackingId(fields, id, stream === undefined ? { via } : { via, stream });
            } catch (error) {
              expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
              expect(smallestOptionBytes(fields, existing, id, via, stream)).toBeGreaterThan(16_384);
              return;
            }
            variables = mailgunApiUserVariables(attached);
          }
          for (const [body, form] of [
            [mailgunJsonWebhook(variables, delivery), false],
            [mailgunLegacyWebhook(variables, delivery), true],
          ] as const) {
            const receipt = await webhook.receive(request(body, form), auth);
            expect(receipt.events.map((event) => event.trackingId)).toEqual([id]);
            expect(receipt.events.map((event) => event.stream)).toEqual([stream]);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** Returns normally (a consistent receipt of schema-valid events) or throws invalid_payload; nothing else. */
async function expectReceiptOrInvalidPayload(run: () => WebhookReceipt | Promise<WebhookReceipt>): Promise<void> {
  let receipt: WebhookReceipt;
  try {
    receipt = await run();
  } catch (error) {
    expect(error).toBeInstanceOf(MailwardenError);
    expect((error as MailwardenError).code).toBe('invalid_payload');
    return;
  }
  expect(receipt.events.length).toBe(receipt.sources.length);
  expect(receipt.skipped).toBe(receipt.warnings.length);
  for (const event of receipt.events) expect(deliveryEventSchema.safeParse(event).success).toBe(true);
}

const eventNames = [
  'accepted',
  'delivered',
  'failed',
  'rejected',
  'opened',
  'clicked',
  'unsubscribed',
  'complained',
  'stored',
  'dropped',
  'bounced',
];
const plausibleValue = fc.oneof(
  fc.constantFrom(
    ...eventNames,
    'permanent',
    'temporary',
    'suppress-bounce',
    'suppress-complaint',
    '605',
    'a@example.com',
    '<a@b>',
    '1767225600',
    '1.5',
    'constructor',
    '__proto__',
    'toString',
  ),
  fc.double(),
  fc.jsonValue(),
);
const plausibleEventData = fc.dictionary(
  fc.constantFrom('event', 'id', 'timestamp', 'recipient', 'severity', 'reason', 'delivery-status', 'message', 'reject', 'user-variables'),
  fc.oneof(
    plausibleValue,
    fc.record({ headers: fc.dictionary(fc.constantFrom('message-id', 'to'), plausibleValue) }),
    fc.record({ service_id: plausibleValue }),
  ),
);
/** event-data shaped like Mailgun's, every field optional, values from the ones that steer the mapping. */
const words = fc.constantFrom(
  'permanent',
  'temporary',
  'suppress-bounce',
  'suppress-unsubscribe',
  'bounce',
  'constructor',
  '__proto__',
  'toString',
  '',
);
const structuredEventData = fc.record(
  {
    event: fc.oneof(fc.constantFrom(...eventNames), words),
    id: fc.string(),
    timestamp: fc.oneof(fc.double(), fc.integer(), fc.constant('1767225600.5')),
    recipient: fc.oneof(fc.constant('a@example.com'), fc.string()),
    severity: words,
    reason: words,
    'delivery-status': fc.option(fc.record({ description: fc.string(), message: fc.string() }, { requiredKeys: [] })),
    message: fc.record({
      headers: fc.record(
        { 'message-id': fc.oneof(fc.string(), fc.constant('<a@b>'), fc.constant('x'.repeat(1100))), to: fc.string() },
        { requiredKeys: [] },
      ),
    }),
    'user-variables': fc.record({ service_id: fc.oneof(fc.string(), fc.integer(), fc.double(), fc.jsonValue()) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const structuredForm = fc
  .tuple(
    fc.oneof(fc.constantFrom('delivered', 'dropped', 'bounced', 'clicked'), words),
    fc.oneof(fc.constantFrom('605', '606', '607', ' 605 ', 'constructor', '__proto__', 'toString'), fc.string()),
    fc.oneof(fc.constant('1767225600'), fc.string()),
  )
  .map(([event, code, timestamp]): [string, string][] => [
    ['event', event],
    ['code', code],
    ['recipient', 'a@example.com'],
    ['timestamp', timestamp],
  ]);

const formFields = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom('event', 'recipient', 'timestamp', 'Message-Id', 'message-id', 'code', 'url', 'service_id', 'description'),
      fc.string(),
    ),
    fc.oneof(
      plausibleValue.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))),
      fc.string(),
    ),
  ),
);

describe('Mailgun carrier limit, pinned', () => {
  it('refuses an ID that must be encoded only when its encoded form is over 16 kB (counterexample of the round trip)', () => {
    const id = '\ufeff  \u0800😀        ';
    for (const stream of [undefined, '0-a_0__a_00']) {
      for (const size of [16_260, 16_266, 16_293, 16_300]) {
        const fields = {
          from: 'news@mg.example.com',
          to: 'jane@example.com',
          'h:X-Filler': 'f'.repeat(size),
          'h:X-Mailgun-Variables': '{}',
        };
        const smallest = smallestOptionBytes(fields, {}, id, 'variable', stream);
        if (smallest > 16_384) expect(() => attachMailgunTrackingId(fields, id, { via: 'variable', stream })).toThrow(MailwardenError);
        else expect(mailgunApiUserVariables(attachMailgunTrackingId(fields, id, { via: 'variable', stream }))).toMatchObject({});
      }
    }
  });

  it("counts the fold it adds before service_id when the caller's line has no room (counterexample of the round trip)", () => {
    // Seed 6800074: the caller's variables filled 983 octets of the header line, so service_id went after a
    // fold (CRLF and a space) that the count left out, and Mailgun got 16,385 bytes of options, 1 over.
    const existing = { '    ': 'v'.repeat(550), '     \\ ': 'v'.repeat(388) };
    const id = `${' '.repeat(100)}"${' '.repeat(13)}"${' '.repeat(13)}`;
    const stream = '0--_--';
    const fields = (size: number) => ({
      from: 'news@mg.example.com',
      to: 'jane@example.com',
      'h:X-Filler': 'f'.repeat(size),
      'h:X-Mailgun-Variables': JSON.stringify(existing),
    });
    const attach = (size: number) => attachMailgunTrackingId(fields(size), id, { via: 'header', stream });
    expect(smallestOptionBytes(fields(15_215), existing, id, 'header', stream)).toBe(16_384);
    const attached = attach(15_215);
    expect(attached['h:X-Mailgun-Variables']).toContain('"\r\n ,"service_id"');
    expect(mailgunApiUserVariables(attached)).toMatchObject({ service_id: id, service_stream: stream });
    expect(() => attach(15_216)).toThrow(
      expect.objectContaining({ code: 'tracking_id_not_carriable', message: expect.stringContaining('would be 16385 bytes') }),
    );
  });
});

describe('Mailgun parsers never throw anything but invalid_payload', () => {
  it('on arbitrary JSON', async () => {
    await fc.assert(fc.asyncProperty(fc.jsonValue(), (payload) => expectReceiptOrInvalidPayload(() => parseMailgunWebhook(payload))));
  });

  it('on arbitrary values made JSON', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), (value) => {
        const text = JSON.stringify(value);
        return expectReceiptOrInvalidPayload(() => parseMailgunWebhook(text === undefined ? undefined : JSON.parse(text)));
      }),
    );
  });

  it('on plausible event-data', async () => {
    await fc.assert(
      fc.asyncProperty(plausibleEventData, (data) => expectReceiptOrInvalidPayload(() => parseMailgunWebhook({ 'event-data': data }))),
    );
  });

  it('on structured event-data and legacy forms', async () => {
    await fc.assert(
      fc.asyncProperty(structuredEventData, (data) => expectReceiptOrInvalidPayload(() => parseMailgunWebhook({ 'event-data': data }))),
      { numRuns: 500 },
    );
    await fc.assert(
      fc.asyncProperty(structuredForm, (fields) => expectReceiptOrInvalidPayload(() => parseMailgunLegacyWebhook(fields))),
      { numRuns: 500 },
    );
  });

  it('on arbitrary legacy forms', async () => {
    await fc.assert(fc.asyncProperty(formFields, (fields) => expectReceiptOrInvalidPayload(() => parseMailgunLegacyWebhook(fields))));
  });

  it('on arbitrary correctly signed bodies through the receiver', async () => {
    const sign = () => {
      const timestamp = String(Math.floor(now / 1000));
      const token = randomBytes(25).toString('hex');
      return {
        timestamp,
        token,
        signature: createHmac('sha256', signingKey)
          .update(timestamp + token)
          .digest('hex'),
      };
    };
    await fc.assert(
      fc.asyncProperty(fc.oneof(plausibleEventData, fc.jsonValue()), formFields, async (data, fields) => {
        const json = new TextEncoder().encode(JSON.stringify({ signature: sign(), 'event-data': data }));
        await expectReceiptOrInvalidPayload(() => webhook.receive(request(json, false), auth));
        const form = new URLSearchParams(fields);
        for (const [name, value] of Object.entries(sign())) form.append(name, value);
        await expectReceiptOrInvalidPayload(() => webhook.receive(request(new TextEncoder().encode(form.toString()), true), auth));
      }),
      { numRuns: 200 },
    );
  });
});
