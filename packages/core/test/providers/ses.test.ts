import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import {
  attachSesHeaderTrackingId,
  decodeHeaderValue,
  encodeServiceIdHeader,
  readSesHeaderTrackingId,
} from '../../src/carriers/ses-header.js';
import { attachSesTagsTrackingId, readSesTagsTrackingId, sesTrackingTags } from '../../src/carriers/ses-tags.js';
import type { DeliveryEvent } from '../../src/events/delivery-event.js';
import { defaultSuppressionPolicy } from '../../src/suppressions/policy.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { createSesWebhook, parseSesWebhook, type SesWebhookAuth } from '../../src/webhooks/ses.js';
import { parseSnsMessage, snsCertificateUrl, snsStringToSign, snsUrl } from '../../src/webhooks/sns.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';
import {
  certificateUrl,
  signEnvelope,
  snsEnvelope,
  snsRawRequest,
  snsRequest,
  snsSigningCertificate,
  snsSigningKey,
  topicArn,
} from '../../src/testing/ses.js';
import { mimeMessage, otherCertificate } from './ses.simulator.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/ses/${name}.json`, import.meta.url), 'utf8');
const parseFixture = (name: string, snsMessageId: string | null = 'sns-1'): ReturnType<typeof parseSesWebhook> =>
  parseSesWebhook(JSON.parse(fixture(name)), { snsMessageId });

function fakeEnv(certificate = snsSigningCertificate) {
  const fetchCertificate = vi.fn(async (_url: string) => certificate);
  const confirmSubscription = vi.fn(async (_url: string) => {});
  const env: WebhookEnvironment = { now: () => Date.parse('2026-04-01T09:00:05Z'), fetchCertificate, confirmSubscription };
  return { env, fetchCertificate, confirmSubscription };
}

const auth: SesWebhookAuth = { topicArns: [topicArn] };

describe('X-Service-Id header carrier', () => {
  it('writes printable ASCII as is', () => {
    expect(encodeServiceIdHeader('spring-sale 2026 (A/B) "x"')).toEqual(['spring-sale 2026 (A/B) "x"']);
  });

  it('encodes what a header would not return literally: non-ASCII, control characters, =?, edge blanks', () => {
    for (const id of ['März', 'tab\there', '=?UTF-8?B?YQ==?=', 'a=?b', ' leading', 'trailing ', ' ']) {
      const words = encodeServiceIdHeader(id);
      expect(
        words.every((word) => /^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/.test(word)),
        id,
      ).toBe(true);
      expect(decodeHeaderValue(words.join(' '))).toBe(id);
    }
  });

  it('splits long values into encoded words of at most 75 characters, between characters', () => {
    const id = `${'😀€ü'.repeat(42)}😀€`;
    const words = encodeServiceIdHeader(id);
    expect(words.length).toBeGreaterThan(1);
    for (const word of words) {
      expect(word.length).toBeLessThanOrEqual(75);
      // Each word decodes on its own: no UTF-8 sequence is cut in two.
      const bytes = Buffer.from(word.slice(10, -2), 'base64');
      expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes)).not.toThrow();
    }
    expect(decodeHeaderValue(words.join(' '))).toBe(id);
  });

  it('never needs more than 855 of the 870 characters SES v2 allows in a header value', () => {
    // Worst case over every 128-character ID, by exhaustive search over UTF-8 lengths: the encoder packs
    // characters greedily, so an ID is, to the encoder, just its sequence of character byte lengths.
    const wordLength = (bytes: number): number => 12 + 4 * Math.ceil(bytes / 3);
    const memo = new Map<string, [number, number[]]>();
    const longest = (chars: number, wordBytes: number): [number, number[]] => {
      if (chars === 128) return [wordLength(wordBytes), []];
      const key = `${chars}:${wordBytes}`;
      const known = memo.get(key);
      if (known !== undefined) return known;
      let best: [number, number[]] = [-1, []];
      for (const size of [1, 2, 3, 4]) {
        const [length, rest] =
          wordBytes > 0 && wordLength(wordBytes + size) > 75
            ? ((next) => [wordLength(wordBytes) + 1 + next[0], next[1]] as [number, number[]])(longest(chars + 1, size))
            : longest(chars + 1, wordBytes + size);
        if (length > best[0]) best = [length, [size, ...rest]];
      }
      memo.set(key, best);
      return best;
    };
    const [length, sizes] = longest(0, 0);
    expect(length).toBe(855);
    const worst = sizes.map((size) => ['a', 'é', '€', '😀'][size - 1]!).join('');
    expect(encodeServiceIdHeader(worst).join(' ')).toHaveLength(855);
  });

  it('inserts the header at the end of the header block of a raw message, keeping CRLF and the body', () => {
    const raw = mimeMessage(['ana@example.org']);
    const out = attachSesHeaderTrackingId(raw, 'spring-sale');
    const [head, ...body] = out.split('\r\n\r\n');
    expect(head!.split('\r\n').at(-1)).toBe('X-Service-Id: spring-sale');
    expect(body.join('\r\n\r\n')).toBe(raw.split('\r\n\r\n').slice(1).join('\r\n\r\n'));
    expect(out.replace('X-Service-Id: spring-sale\r\n', '')).toBe(raw);
    expect(out).not.toMatch(/[^\r]\n/);
  });

  it('keeps LF line endings of a message that uses them', () => {
    const raw = mimeMessage(['ana@example.org'], '\n');
    expect(attachSesHeaderTrackingId(raw, 'x')).toBe(raw.replace('\n\n', '\nX-Service-Id: x\n\n'));
  });

  it('folds long encoded values in raw MIME, every line within 76 characters', () => {
    const id = '日本'.repeat(64);
    const out = attachSesHeaderTrackingId(mimeMessage(['ana@example.org']), id);
    const field = out.slice(out.indexOf('X-Service-Id:')).split('\r\n\r\n')[0]!;
    const lines = field.split('\r\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(76);
    expect(lines.slice(1).every((line) => line.startsWith(' '))).toBe(true);
    expect(decodeHeaderValue(field.slice('X-Service-Id: '.length))).toBe(id);
  });

  it('replaces an existing X-Service-Id (any case, folded) instead of adding a second one', () => {
    const raw = 'From: a@example.com\r\nx-service-id: =?UTF-8?B?b2xk?=\r\n =?UTF-8?B?b2xk?=\r\nSubject: s\r\n\r\nbody';
    expect(attachSesHeaderTrackingId(raw, 'new')).toBe('From: a@example.com\r\nSubject: s\r\nX-Service-Id: new\r\n\r\nbody');
  });

  it('handles a message that is only headers, without a final newline', () => {
    expect(attachSesHeaderTrackingId('Subject: s', 'id')).toBe('Subject: s\r\nX-Service-Id: id\r\n');
  });

  it('adds to SES v2 Content.Simple.Headers without touching the input', () => {
    const request = {
      FromEmailAddress: 'shop@example.com',
      Destination: { ToAddresses: ['ana@example.org'] },
      Content: {
        Simple: {
          Subject: { Data: 'Hi' },
          Body: { Text: { Data: 'Hello' } },
          Headers: [
            { Name: 'X-Campaign', Value: 'spring' },
            { Name: 'X-SERVICE-ID', Value: 'old' },
          ],
        },
      },
    };
    const copy = structuredClone(request);
    const out = attachSesHeaderTrackingId(request, 'Frühling');
    expect(request).toEqual(copy);
    expect(out.Content.Simple.Headers).toEqual([
      { Name: 'X-Campaign', Value: 'spring' },
      { Name: 'X-Service-Id', Value: '=?UTF-8?B?RnLDvGhsaW5n?=' },
    ]);
    expect(out.Content.Simple.Subject).toBe(request.Content.Simple.Subject);
    expect(out.FromEmailAddress).toBe('shop@example.com');
  });

  it('adds to SES v2 Content.Template.Headers', () => {
    const out = attachSesHeaderTrackingId({ Content: { Template: { TemplateName: 'receipt', TemplateData: '{}' } } }, 'r-1');
    expect(out.Content.Template).toEqual({
      TemplateName: 'receipt',
      TemplateData: '{}',
      Headers: [{ Name: 'X-Service-Id', Value: 'r-1' }],
    });
  });

  it('refuses a v2 request without Simple or Template content, and invalid tracking IDs', async () => {
    await expectMailwardenError(() => attachSesHeaderTrackingId({ Content: {} }, 'x'), 'invalid_request');
    await expectMailwardenError(() => attachSesHeaderTrackingId('Subject: s\r\n\r\n', ''), 'invalid_tracking_id');
    await expectMailwardenError(() => attachSesHeaderTrackingId('Subject: s\r\n\r\n', 'x'.repeat(129)), 'invalid_tracking_id');
    await expectMailwardenError(() => attachSesHeaderTrackingId('Subject: s\r\n\r\n', 'a\ud800'), 'invalid_tracking_id');
  });

  it('decodes adjacent encoded words ignoring the white space between them (RFC 2047 §6.2)', () => {
    expect(decodeHeaderValue('=?UTF-8?B?U29tbWVyIOKAlCA=?= \r\n\t =?UTF-8?B?5aSP?=')).toBe('Sommer — 夏');
    // White space between an encoded word and plain text is kept.
    expect(decodeHeaderValue('a =?UTF-8?Q?b_c?= d')).toBe('a b c d');
    expect(decodeHeaderValue('=?iso-8859-1?q?M=E4rz?=')).toBe('März');
    // A UTF-8 sequence split across two words (other encoders do that) is joined before decoding.
    const bytes = Buffer.from('€');
    expect(
      decodeHeaderValue(`=?UTF-8?B?${bytes.subarray(0, 1).toString('base64')}?= =?UTF-8?B?${bytes.subarray(1).toString('base64')}?=`),
    ).toBe('€');
    // A leading U+FEFF is part of the value, not a byte-order mark.
    expect(decodeHeaderValue(`=?UTF-8?B?${Buffer.from('\ufeffx').toString('base64')}?=`)).toBe('\ufeffx');
  });

  it('leaves malformed or unknown encoded words as written', () => {
    expect(decodeHeaderValue('=?UTF-8?B?***?=')).toBe('=?UTF-8?B?***?=');
    expect(decodeHeaderValue('=?x-unknown?B?YQ==?=')).toBe('=?x-unknown?B?YQ==?=');
    expect(decodeHeaderValue('=?UTF-8?B?/w==?=')).toBe('=?UTF-8?B?/w==?=');
    expect(decodeHeaderValue('plain =? value')).toBe('plain =? value');
  });

  it('reads the first X-Service-Id of mail.headers, by case-insensitive name', () => {
    expect(
      readSesHeaderTrackingId([
        { name: 'From', value: 'a' },
        { name: 'x-SERVICE-id', value: '=?UTF-8?B?w6k=?=' },
      ]),
    ).toBe('é');
    expect(readSesHeaderTrackingId(undefined)).toBeNull();
    expect(readSesHeaderTrackingId([])).toBeNull();
    expect(readSesHeaderTrackingId([{ name: 'X-Service-Id', value: '' }])).toBeNull();
    expect(readSesHeaderTrackingId([{ name: 'X-Service-Id', value: 42 }, null, 'x'])).toBeNull();
    expect(readSesHeaderTrackingId({ 'X-Service-Id': 'a' })).toBeNull();
  });
});

describe('SES message tag carrier', () => {
  it('writes the plain value when it fits the tag alphabet', () => {
    expect(sesTrackingTags('spring_sale-2026')).toEqual([{ Name: 'service_id', Value: 'spring_sale-2026' }]);
  });

  it('writes base64url of the UTF-8 plus service_id_enc=b64u otherwise', () => {
    expect(sesTrackingTags('spring.sale')).toEqual([
      { Name: 'service_id', Value: Buffer.from('spring.sale').toString('base64url') },
      { Name: 'service_id_enc', Value: 'b64u' },
    ]);
    expect(readSesTagsTrackingId({ service_id: ['c3ByaW5nLnNhbGU'], service_id_enc: ['b64u'] })).toBe('spring.sale');
  });

  it('refuses an ID whose encoded form is over 256 characters, naming the header carrier', async () => {
    // 128 four-byte characters: 512 bytes of UTF-8, 683 characters of base64url.
    const error = await expectMailwardenError(() => sesTrackingTags('😀'.repeat(128)), 'tracking_id_not_carriable');
    expect(error.message).toContain('256');
    expect(error.message).toContain('X-Service-Id');
    // 192 bytes is the most that fits: 256 characters exactly.
    expect(sesTrackingTags('€'.repeat(64))[0]!.Value).toHaveLength(256);
  });

  it('uses Tags for v1 and EmailTags for v2, replacing an old service_id and keeping other tags', () => {
    const v1 = {
      Source: 'shop@example.com',
      Tags: [
        { Name: 'campaign', Value: 'x' },
        { Name: 'service_id_enc', Value: 'b64u' },
        { Name: 'service_id', Value: 'b2xk' },
      ],
    };
    const copy = structuredClone(v1);
    const out = attachSesTagsTrackingId(v1, 'new', { api: 'v1' });
    expect(v1).toEqual(copy);
    // A stale service_id_enc would make the plain value decode as base64url.
    expect(out).toEqual({
      Source: 'shop@example.com',
      Tags: [
        { Name: 'campaign', Value: 'x' },
        { Name: 'service_id', Value: 'new' },
      ],
    });
    expect(out).not.toHaveProperty('EmailTags');

    const v2 = attachSesTagsTrackingId({ FromEmailAddress: 'shop@example.com', Content: {} }, 'a b', { api: 'v2' });
    expect(v2).toEqual({
      FromEmailAddress: 'shop@example.com',
      Content: {},
      EmailTags: [
        { Name: 'service_id', Value: 'YSBi' },
        { Name: 'service_id_enc', Value: 'b64u' },
      ],
    });
    expect(v2).not.toHaveProperty('Tags');
  });

  it('refuses a request of the other API version, which the SDK would silently strip of its tags', async () => {
    await expectMailwardenError(
      () => attachSesTagsTrackingId({ FromEmailAddress: 'a@example.com' }, 'x', { api: 'v1' }),
      'invalid_request',
    );
    await expectMailwardenError(
      () => attachSesTagsTrackingId({ RawMessage: { Data: new Uint8Array() } }, 'x', { api: 'v2' }),
      'invalid_request',
    );
    await expectMailwardenError(() => attachSesTagsTrackingId({ Tags: [] }, 'x', { api: 'v2' }), 'invalid_request');
  });

  it('reads tags tolerantly', () => {
    expect(readSesTagsTrackingId({ service_id: ['abc'] })).toBe('abc');
    expect(readSesTagsTrackingId({ service_id: 'abc' })).toBe('abc');
    expect(readSesTagsTrackingId({ service_id: [] })).toBeNull();
    expect(readSesTagsTrackingId({ service_id: [7] })).toBeNull();
    expect(readSesTagsTrackingId(undefined)).toBeNull();
    // An encoding we do not know, or a value that does not decode, gives no ID rather than a wrong one.
    expect(readSesTagsTrackingId({ service_id: ['abc'], service_id_enc: ['zip'] })).toBeNull();
    expect(readSesTagsTrackingId({ service_id: ['a.b'], service_id_enc: ['b64u'] })).toBeNull();
    expect(readSesTagsTrackingId({ service_id: ['_w'], service_id_enc: ['b64u'] })).toBeNull();
    expect(readSesTagsTrackingId({ service_id: ['77u_eA'], service_id_enc: ['b64u'] })).toBe('\ufeffx');
  });
});

describe('parseSesWebhook', () => {
  const base = { provider: 'ses', bounceClass: null, providerSuppression: null } as const;

  it('event-publishing permanent bounce: one hard bounce per bounced recipient', () => {
    const receipt = parseFixture('bounce-permanent');
    expect(receipt.warnings).toEqual([]);
    expect(receipt.sources).toEqual([0, 0]);
    expect(receipt.events).toEqual<DeliveryEvent[]>([
      {
        ...base,
        type: 'bounced',
        bounceClass: 'hard',
        messageId: '0100018e0a2e1a9b-4f2c8d1e-7a3b-4c5d-8e9f-0a1b2c3d4e5f-000000',
        recipient: 'ana@example.org',
        trackingId: 'spring-sale',
        occurredAt: new Date('2026-03-02T10:15:07.669Z'),
        eventKey: 'sns-1:ana@example.org',
        details: { smtpStatus: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown', bounceClassification: 'Permanent/General' },
      },
      {
        ...base,
        type: 'bounced',
        bounceClass: 'hard',
        messageId: '0100018e0a2e1a9b-4f2c8d1e-7a3b-4c5d-8e9f-0a1b2c3d4e5f-000000',
        recipient: 'Bo@Example.org',
        trackingId: 'spring-sale',
        occurredAt: new Date('2026-03-02T10:15:07.669Z'),
        eventKey: 'sns-1:Bo@Example.org',
        details: { smtpStatus: '5.1.1', diagnostic: 'smtp; 550 5.1.1 no such mailbox', bounceClassification: 'Permanent/General' },
      },
    ]);
    expect(receipt.events.map((event) => defaultSuppressionPolicy(event))).toEqual(['hard_bounce', 'hard_bounce']);
  });

  it('feedback transient bounce without headers: soft, trackingId null', () => {
    const { events, warnings } = parseFixture('bounce-transient-feedback');
    expect(warnings).toEqual([]);
    expect(events).toEqual<DeliveryEvent[]>([
      {
        ...base,
        type: 'bounced',
        bounceClass: 'soft',
        messageId: '0100018e0a5b1f2e-3d4c5b6a-7980-4a1b-9c2d-3e4f5a6b7c8d-000000',
        recipient: 'full@example.org',
        trackingId: null,
        occurredAt: new Date('2026-03-02T11:00:41.000Z'),
        eventKey: 'sns-1:full@example.org',
        details: { smtpStatus: '5.2.2', diagnostic: 'smtp; 552 5.2.2 mailbox full', bounceClassification: 'Transient/MailboxFull' },
      },
    ]);
    expect(defaultSuppressionPolicy(events[0]!)).toBeNull();
  });

  it('undetermined bounce; tracking ID from a b64u-encoded tag when no header carries it', () => {
    const { events } = parseFixture('bounce-undetermined');
    expect(events).toEqual<DeliveryEvent[]>([
      {
        ...base,
        type: 'bounced',
        bounceClass: 'undetermined',
        messageId: '0100018e0aaf9876-12345678-9abc-4def-8012-3456789abcde-000000',
        recipient: 'odd@example.org',
        trackingId: 'Receipts — März',
        occurredAt: new Date('2026-03-02T12:30:00.120Z'),
        eventKey: 'sns-1:odd@example.org',
        details: { bounceClassification: 'Undetermined/Undetermined' },
      },
    ]);
  });

  it('OnAccountSuppressionList bounce: a reject because of the account list, which suppresses as hard_bounce', () => {
    const { events } = parseFixture('bounce-on-account-suppression-list');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'rejected',
      bounceClass: null,
      providerSuppression: 'bounce',
      recipient: 'gone@example.org',
      trackingId: 'Sommer — 夏',
      occurredAt: new Date('2026-03-02T13:00:00.300Z'),
    });
    expect(events[0]!.details).toStrictEqual({
      smtpStatus: '5.1.1',
      diagnostic: expect.stringMatching(/^Amazon SES did not send the message to this address because it is on the suppression list/),
      bounceClassification: 'Permanent/OnAccountSuppressionList',
      rejectReason: 'OnAccountSuppressionList',
    });
    expect(defaultSuppressionPolicy(events[0]!)).toBe('hard_bounce');
  });

  it('Permanent/Suppressed (SES global list) is a provider reject too', () => {
    const notification = JSON.parse(fixture('bounce-permanent'));
    notification.bounce.bounceSubType = 'Suppressed';
    const { events } = parseSesWebhook(notification, { snsMessageId: 'm' });
    expect(events.map((event) => [event.type, event.providerSuppression, defaultSuppressionPolicy(event)])).toEqual([
      ['rejected', 'bounce', 'hard_bounce'],
      ['rejected', 'bounce', 'hard_bounce'],
    ]);
  });

  it('feedback complaint: one complained event per listed recipient, tracking ID from a Q-encoded header', () => {
    const { events, warnings } = parseFixture('complaint-feedback');
    expect(warnings).toEqual([]);
    const common = {
      ...base,
      type: 'complained',
      messageId: '0100018e0b0f0000-11112222-3333-4444-8555-666677778888-000000',
      trackingId: 'march news',
      occurredAt: new Date('2026-03-03T08:20:11.000Z'),
      details: { feedbackType: 'abuse' },
    } as const;
    expect(events).toEqual<DeliveryEvent[]>([
      { ...common, recipient: 'dee@example.net', eventKey: 'sns-1:dee@example.net' },
      { ...common, recipient: 'eve@example.net', eventKey: 'sns-1:eve@example.net' },
    ]);
    expect(events.map((event) => defaultSuppressionPolicy(event))).toEqual(['complaint', 'complaint']);
  });

  it('not-spam complaint: an unknown event that suppresses nothing', () => {
    const { events } = parseFixture('complaint-not-spam');
    expect(events).toEqual<DeliveryEvent[]>([
      {
        ...base,
        type: 'unknown',
        messageId: '0100018e0b0f0001-11112222-3333-4444-8555-666677778888-000000',
        recipient: 'gus@example.net',
        trackingId: 'march-news',
        occurredAt: new Date('2026-03-03T09:00:00.000Z'),
        eventKey: 'sns-1:gus@example.net',
        details: { feedbackType: 'not-spam' },
      },
    ]);
    expect(defaultSuppressionPolicy(events[0]!)).toBeNull();
  });

  it('OnAccountSuppressionList complaint: a reject because of the account list, suppressing as complaint', () => {
    const { events } = parseFixture('complaint-on-account-suppression-list');
    expect(events).toEqual<DeliveryEvent[]>([
      {
        ...base,
        type: 'rejected',
        providerSuppression: 'complaint',
        messageId: '0100018e0b0f0002-11112222-3333-4444-8555-666677778888-000000',
        recipient: 'hal@example.net',
        trackingId: 'march-news',
        occurredAt: new Date('2026-03-03T09:30:00.000Z'),
        eventKey: 'sns-1:hal@example.net',
        details: { rejectReason: 'OnAccountSuppressionList' },
      },
    ]);
    expect(defaultSuppressionPolicy(events[0]!)).toBe('complaint');
  });

  it('delivery: one event per delivery.recipients entry; the header wins over the tag', () => {
    const { events } = parseFixture('delivery');
    expect(events.map((event) => event.recipient)).toEqual(['ivy@example.org', 'jay@example.org', 'kim@example.org']);
    for (const event of events) {
      expect(event).toEqual({
        ...base,
        type: 'delivered',
        messageId: '0100018e0c000000-aaaa0000-bbbb-4ccc-8ddd-eeee00000001-000000',
        recipient: event.recipient,
        trackingId: 'order 📦',
        occurredAt: new Date('2026-03-04T07:00:01.520Z'),
        eventKey: `sns-1:${event.recipient}`,
        details: { smtpStatus: '2.6.0', diagnostic: '250 2.6.0 Message received' },
      });
    }
    const notification = JSON.parse(fixture('delivery'));
    notification.mail.headers[3].value = 'from-header';
    expect(parseSesWebhook(notification).events[0]!.trackingId).toBe('from-header');
  });

  it('feedback delivery without headers: trackingId null', () => {
    const { events } = parseFixture('delivery-feedback-no-headers');
    expect(events.map((event) => [event.recipient, event.type, event.trackingId])).toEqual([
      ['lea@example.org', 'delivered', null],
      ['max@example.org', 'delivered', null],
    ]);
  });

  it('send, reject and rendering failure apply to every address of mail.destination', () => {
    const send = parseFixture('send').events;
    expect(send.map((event) => [event.type, event.recipient, event.trackingId, event.occurredAt.toISOString()])).toEqual([
      ['sent', 'ned@example.org', 'welcome', '2026-03-05T06:00:00.000Z'],
      ['sent', 'oli@example.org', 'welcome', '2026-03-05T06:00:00.000Z'],
    ]);
    expect(parseFixture('reject').events).toEqual<DeliveryEvent[]>([
      {
        ...base,
        type: 'rejected',
        messageId: '0100018e0d111111-aaaa0000-bbbb-4ccc-8ddd-eeee00000004-000000',
        recipient: 'pia@example.org',
        trackingId: 'welcome',
        occurredAt: new Date('2026-03-05T06:10:00.000Z'),
        eventKey: 'sns-1:pia@example.org',
        details: { rejectReason: 'Bad content' },
      },
    ]);
    const failure = parseFixture('rendering-failure').events;
    expect(failure).toEqual<DeliveryEvent[]>([
      {
        ...base,
        type: 'rejected',
        messageId: '0100018e0d333333-aaaa0000-bbbb-4ccc-8ddd-eeee00000006-000000',
        recipient: 'sam@example.org',
        trackingId: 'receipt',
        occurredAt: new Date('2026-03-05T08:00:00.000Z'),
        eventKey: 'sns-1:sam@example.org',
        details: { rejectReason: "Attribute 'order_id' is not present in the rendering data." },
      },
    ]);
    expect(defaultSuppressionPolicy(failure[0]!)).toBeNull();
  });

  it('open and click fan out to mail.destination', () => {
    for (const [name, type, at] of [
      ['open', 'opened', '2026-03-05T07:30:12.000Z'],
      ['click', 'clicked', '2026-03-05T07:31:00.000Z'],
    ] as const) {
      const { events } = parseFixture(name, `sns-${name}`);
      expect(events).toEqual(
        ['quinn@example.org', 'rae@example.org'].map((recipient) => ({
          ...base,
          type,
          messageId: '0100018e0d222222-aaaa0000-bbbb-4ccc-8ddd-eeee00000005-000000',
          recipient,
          trackingId: 'march-news',
          occurredAt: new Date(at),
          eventKey: `sns-${name}:${recipient}`,
          // Personal data: received, and dropped before the store unless the instance opts in.
          details:
            name === 'open'
              ? { userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)' }
              : { url: 'https://shop.example.com/sale?utm_source=mail', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64)' },
        })),
      );
    }
  });

  it('delivery delay: deferred per delayed recipient', () => {
    const { events } = parseFixture('delivery-delay');
    const details = {
      smtpStatus: '4.4.1',
      diagnostic: 'smtp; 421 4.4.1 Unable to connect to remote host',
      bounceClassification: 'TransientCommunicationFailure',
    };
    expect(events.map((event) => [event.type, event.recipient, event.trackingId, event.details])).toEqual([
      ['deferred', 'tia@example.org', 'receipt', details],
      ['deferred', 'uma@example.org', 'receipt', details],
    ]);
    expect(events[0]!.occurredAt).toEqual(new Date('2026-03-05T09:20:00.000Z'));
  });

  it('subscription: unsubscribed on unsubscribeAll or a new topic opt-out, else unknown', () => {
    const notification = JSON.parse(fixture('subscription'));
    expect(parseSesWebhook(notification).events).toEqual([
      expect.objectContaining({ type: 'unsubscribed', recipient: 'vic@example.org', occurredAt: new Date('2026-03-05T10:05:17.910Z') }),
    ]);
    notification.subscription.newTopicPreferences.unsubscribeAll = false;
    expect(parseSesWebhook(notification).events[0]!.type).toBe('unknown');
    notification.subscription.newTopicPreferences.topicSubscriptionStatus.push({ topicName: 'News', subscriptionStatus: 'OptOut' });
    expect(parseSesWebhook(notification).events[0]!.type).toBe('unsubscribed');
    // An unsubscribe suppresses (docs/decisions.md, "Who suppresses on an unsubscribe"); `News` is no
    // stream name, so the message's stream (here none) holds it.
    expect(defaultSuppressionPolicy(parseSesWebhook(notification).events[0]!)).toBe('unsubscribe');
    expect(parseSesWebhook(notification).events[0]!.stream).toBeUndefined();
  });

  it('subscription: each topic newly opted out of that is a stream name is an unsubscribe in that stream', () => {
    const notification = JSON.parse(fixture('subscription'));
    const preferences = notification.subscription.newTopicPreferences;
    preferences.unsubscribeAll = false;
    preferences.topicSubscriptionStatus.push({ topicName: 'weekly-digest', subscriptionStatus: 'OptOut' });
    const [one, ...none] = parseSesWebhook(notification, { snsMessageId: 'sns-1' }).events;
    expect(none).toEqual([]);
    expect(one).toMatchObject({ type: 'unsubscribed', stream: 'weekly-digest', eventKey: 'sns-1:vic@example.org' });
    // Two at once: one event each, told apart by the topic; a topic opted out of before is no news.
    preferences.topicSubscriptionStatus.push({ topicName: 'marketing', subscriptionStatus: 'OptOut' });
    notification.subscription.oldTopicPreferences.topicSubscriptionStatus = [{ topicName: 'News', subscriptionStatus: 'OptOut' }];
    preferences.topicSubscriptionStatus.push({ topicName: 'News', subscriptionStatus: 'OptOut' });
    const events = parseSesWebhook(notification, { snsMessageId: 'sns-1' }).events;
    expect(events.map(({ stream, eventKey }) => [stream, eventKey])).toEqual([
      ['weekly-digest', 'sns-1:vic@example.org:weekly-digest'],
      ['marketing', 'sns-1:vic@example.org:marketing'],
    ]);
    // Raw delivery: the hashed keys differ too.
    const raw = parseSesWebhook(notification).events;
    expect(new Set(raw.map((event) => event.eventKey)).size).toBe(2);
  });

  it('without an SNS MessageId (raw delivery) keys events by a hash of their identifying fields', () => {
    const { events } = parseFixture('bounce-permanent', null);
    const key = (recipient: string): string =>
      createHash('sha256')
        .update(
          JSON.stringify(['0100018e0a2e1a9b-4f2c8d1e-7a3b-4c5d-8e9f-0a1b2c3d4e5f-000000', 'Bounce', '2026-03-02T10:15:07.669Z', recipient]),
        )
        .digest('hex');
    expect(events.map((event) => event.eventKey)).toEqual([key('ana@example.org'), key('Bo@Example.org')]);
    // Both families describe the same bounce the same way, so without MessageIds they share keys.
    const feedback = JSON.parse(fixture('bounce-permanent'));
    feedback.notificationType = feedback.eventType;
    delete feedback.eventType;
    expect(parseSesWebhook(feedback).events.map((event) => event.eventKey)).toEqual(events.map((event) => event.eventKey));
  });

  it('falls back to mail.timestamp when the event object has none', () => {
    const notification = JSON.parse(fixture('delivery'));
    delete notification.delivery.timestamp;
    expect(parseSesWebhook(notification).events[0]!.occurredAt).toEqual(new Date('2026-03-04T07:00:00.000Z'));
  });

  it('skips malformed parts with warnings and keeps the rest', () => {
    const notification = JSON.parse(fixture('bounce-permanent'));
    notification.bounce.bouncedRecipients.push({ action: 'failed' }, 'x');
    const receipt = parseSesWebhook(notification, { snsMessageId: 'm' });
    expect(receipt.events).toHaveLength(2);
    expect(receipt.skipped).toBe(2);
    expect(receipt.warnings).toEqual([
      { index: 0, code: 'invalid_event', message: 'bounce.bouncedRecipients[2] has no emailAddress.' },
      { index: 0, code: 'invalid_event', message: 'bounce.bouncedRecipients[3] has no emailAddress.' },
    ]);
  });

  it('skips notifications it cannot use, with one warning each', () => {
    const cases: [unknown, RegExp][] = [
      [{}, /neither eventType nor notificationType/],
      [{ notificationType: 'Received', mail: {} }, /"Received" is not a delivery event/],
      [{ eventType: 'toString' }, /"toString"/],
      [{ eventType: 'Bounce', mail: { timestamp: '2026-01-01T00:00:00Z' } }, /no "bounce" object/],
      [{ eventType: 'Open', mail: { destination: ['a@example.org'] }, open: {} }, /no valid timestamp/],
      [{ eventType: 'Open', mail: { timestamp: '2026-01-01T00:00:00Z' } }, /mail.destination is missing/],
      [
        { eventType: 'Delivery', mail: {}, delivery: { timestamp: '2026-01-01T00:00:00Z', recipients: [] } },
        /delivery.recipients is missing or empty/,
      ],
    ];
    for (const [notification, message] of cases) {
      const receipt = parseSesWebhook(notification);
      expect(receipt.events).toEqual([]);
      expect(receipt.skipped).toBe(1);
      expect(receipt.warnings[0]!.message).toMatch(message);
    }
  });

  it('throws invalid_payload only for a notification that is not a JSON object', async () => {
    for (const value of [null, 1, 'x', [], [{}]]) await expectMailwardenError(() => parseSesWebhook(value), 'invalid_payload');
  });
});

describe('SNS signature primitives', () => {
  it('builds the string to sign with a newline after every value, the last included', () => {
    const message = parseSnsMessage({ Type: 'Notification', MessageId: 'id', TopicArn: 't', Message: 'm', Timestamp: 'ts', Subject: 's' });
    expect(snsStringToSign(message)).toBe('Message\nm\nMessageId\nid\nSubject\ns\nTimestamp\nts\nTopicArn\nt\nType\nNotification\n');
    const confirmation = parseSnsMessage({
      Type: 'SubscriptionConfirmation',
      MessageId: 'id',
      TopicArn: 't',
      Message: 'm',
      Timestamp: 'ts',
      Token: 'k',
      SubscribeURL: 'u',
    });
    expect(snsStringToSign(confirmation)).toBe(
      'Message\nm\nMessageId\nid\nSubscribeURL\nu\nTimestamp\nts\nToken\nk\nTopicArn\nt\nType\nSubscriptionConfirmation\n',
    );
  });

  it('accepts only https SNS hosts', () => {
    expect(snsCertificateUrl(certificateUrl)?.href).toBe(certificateUrl);
    expect(snsCertificateUrl('https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-0123.pem')).not.toBeNull();
    for (const url of [
      'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123.pem',
      'https://sns.evil.com/SimpleNotificationService-0123.pem',
      'https://sns.us-east-1.amazonaws.com.evil.org/SimpleNotificationService-0123.pem',
      'https://sns.us-east-1.amazonaws.com@evil.org/SimpleNotificationService-0123.pem',
      'https://user:pass@sns.us-east-1.amazonaws.com/SimpleNotificationService-0123.pem',
      'https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-0123.pem',
      'https://evil.org/sns.us-east-1.amazonaws.com/x.pem',
      'https://sqs.us-east-1.amazonaws.com/SimpleNotificationService-0123.pem',
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123.txt',
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123.pem?x=1',
      'https://sns..amazonaws.com/x.pem',
      'not a url',
    ]) {
      expect(snsCertificateUrl(url), url).toBeNull();
    }
    expect(snsUrl('https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=x')).not.toBeNull();
    expect(snsUrl('https://sns.us-east-1.amazonaws.com.evil.org/?Action=ConfirmSubscription')).toBeNull();
  });
});

describe('createSesWebhook', () => {
  const bounce = fixture('bounce-permanent');

  for (const signatureVersion of ['1', '2'] as const) {
    describe(`SignatureVersion ${signatureVersion}`, () => {
      it('accepts a validly signed notification (JSON sent as text/plain)', async () => {
        const { env, fetchCertificate } = fakeEnv();
        const envelope = snsEnvelope(bounce, { signatureVersion, subject: 'Amazon SES Email Event Notification', messageId: 'a1b2' });
        const receipt = await createSesWebhook(env).receive(snsRequest(envelope), auth);
        expect(receipt.events.map((event) => [event.type, event.recipient, event.eventKey])).toEqual([
          ['bounced', 'ana@example.org', 'a1b2:ana@example.org'],
          ['bounced', 'Bo@Example.org', 'a1b2:Bo@Example.org'],
        ]);
        expect(fetchCertificate).toHaveBeenCalledWith(certificateUrl);
      });

      it('accepts a notification without Subject', async () => {
        const { env } = fakeEnv();
        const receipt = await createSesWebhook(env).receive(snsRequest(snsEnvelope(bounce, { signatureVersion })), auth);
        expect(receipt.events).toHaveLength(2);
      });

      it('rejects a tampered Message', async () => {
        const { env } = fakeEnv();
        const envelope = snsEnvelope(bounce, { signatureVersion });
        envelope.Message = envelope.Message!.replace('ana@example.org', 'someone@example.org');
        await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(envelope), auth), 'webhook_unauthorized');
      });

      it('rejects a tampered Subject or a signature of the other version', async () => {
        const { env } = fakeEnv();
        const envelope = snsEnvelope(bounce, { signatureVersion, subject: 'a' });
        await expectMailwardenError(
          () => createSesWebhook(env).receive(snsRequest({ ...envelope, Subject: 'b' }), auth),
          'webhook_unauthorized',
        );
        const other = { ...envelope, SignatureVersion: signatureVersion === '1' ? '2' : '1' };
        await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(other), auth), 'webhook_unauthorized');
      });

      it('rejects a signature that does not match the certificate (the cert of another key)', async () => {
        const { env } = fakeEnv(otherCertificate);
        const envelope = snsEnvelope(bounce, { signatureVersion });
        await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(envelope), auth), 'webhook_unauthorized');
      });

      it('rejects an unlisted TopicArn before fetching anything', async () => {
        const { env, fetchCertificate } = fakeEnv();
        const envelope = snsEnvelope(bounce, { signatureVersion, topicArn: 'arn:aws:sns:us-east-1:999999999999:attacker' });
        const error = await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(envelope), auth), 'webhook_unauthorized');
        expect(error.message).toContain('not allowlisted');
        expect(fetchCertificate).not.toHaveBeenCalled();
      });

      it('rejects certificate URLs off SNS hosts without fetching them', async () => {
        for (const signingCertUrl of [
          'https://sns.evil.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem',
          'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem',
          'https://sns.us-east-1.amazonaws.com.evil.org/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem',
          'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.txt',
          'https://sns.us-east-1.amazonaws.com/',
        ]) {
          const { env, fetchCertificate } = fakeEnv();
          const envelope = snsEnvelope(bounce, { signatureVersion, signingCertUrl });
          await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(envelope), auth), 'webhook_unauthorized');
          expect(fetchCertificate, signingCertUrl).not.toHaveBeenCalled();
        }
      });

      it('confirms a subscription of an allowlisted topic through its SubscribeURL', async () => {
        const { env, confirmSubscription } = fakeEnv();
        const envelope = snsEnvelope('You have chosen to subscribe to the topic arn:aws:sns:us-east-1:123456789012:ses-events.', {
          signatureVersion,
          type: 'SubscriptionConfirmation',
        });
        const receipt = await createSesWebhook(env).receive(snsRequest(envelope), auth);
        expect(receipt).toEqual({ events: [], sources: [], warnings: [], skipped: 0, notice: 'subscription_confirmed' });
        expect(confirmSubscription).toHaveBeenCalledExactlyOnceWith(envelope.SubscribeURL);
      });

      it('does not confirm a SubscribeURL on a foreign host, even when signed', async () => {
        for (const subscribeUrl of [
          'https://evil.example.com/?Action=ConfirmSubscription',
          'https://sns.us-east-1.amazonaws.com.evil.org/?Action=ConfirmSubscription',
          'http://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription',
          'https://169.254.169.254/latest/meta-data/',
        ]) {
          const { env, confirmSubscription } = fakeEnv();
          const envelope = snsEnvelope('confirm', { signatureVersion, type: 'SubscriptionConfirmation', subscribeUrl });
          await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(envelope), auth), 'webhook_unauthorized');
          expect(confirmSubscription).not.toHaveBeenCalled();
        }
      });

      it('does not confirm a subscription with a bad signature or an unlisted topic', async () => {
        const { env, confirmSubscription } = fakeEnv();
        const forged = snsEnvelope('confirm', { signatureVersion, type: 'SubscriptionConfirmation' });
        forged.SubscribeURL = 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=other&Token=x';
        await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(forged), auth), 'webhook_unauthorized');
        const foreign = snsEnvelope('confirm', {
          signatureVersion,
          type: 'SubscriptionConfirmation',
          topicArn: 'arn:aws:sns:us-east-1:999999999999:x',
        });
        await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(foreign), auth), 'webhook_unauthorized');
        expect(confirmSubscription).not.toHaveBeenCalled();
      });
    });
  }

  it('fetches a certificate once and reuses it for later messages', async () => {
    const { env, fetchCertificate } = fakeEnv();
    const ses = createSesWebhook(env);
    await ses.receive(snsRequest(snsEnvelope(bounce)), auth);
    await ses.receive(snsRequest(snsEnvelope(fixture('delivery'), { signatureVersion: '2' })), auth);
    await Promise.all([ses.receive(snsRequest(snsEnvelope(bounce)), auth), ses.receive(snsRequest(snsEnvelope(bounce)), auth)]);
    expect(fetchCertificate).toHaveBeenCalledTimes(1);
  });

  it('does not cache a certificate that failed to load, and reports a fetch failure as verification_unavailable (SNS retries a 503)', async () => {
    const { env, fetchCertificate } = fakeEnv();
    fetchCertificate.mockRejectedValueOnce(new Error('ECONNRESET'));
    const ses = createSesWebhook(env);
    await expectMailwardenError(() => ses.receive(snsRequest(snsEnvelope(bounce)), auth), 'verification_unavailable');
    fetchCertificate.mockResolvedValueOnce('not a certificate');
    await expectMailwardenError(() => ses.receive(snsRequest(snsEnvelope(bounce)), auth), 'webhook_unauthorized');
    expect((await ses.receive(snsRequest(snsEnvelope(bounce)), auth)).events).toHaveLength(2);
    expect(fetchCertificate).toHaveBeenCalledTimes(3);
  });

  it('acknowledges an unsubscribe confirmation without acting on it', async () => {
    const { env, confirmSubscription } = fakeEnv();
    const envelope = snsEnvelope('You have chosen to deactivate subscription …', { type: 'UnsubscribeConfirmation' });
    expect((await createSesWebhook(env).receive(snsRequest(envelope), auth)).notice).toBe('unsubscribe_confirmation');
    expect(confirmSubscription).not.toHaveBeenCalled();
  });

  it('answers SES\'s "Successfully validated" notice as a ping', async () => {
    const { env } = fakeEnv();
    const envelope = snsEnvelope('Successfully validated SNS topic for Amazon SES event publishing.');
    expect(await createSesWebhook(env).receive(snsRequest(envelope), auth)).toEqual({
      events: [],
      sources: [],
      warnings: [],
      skipped: 0,
      notice: 'ping',
    });
  });

  it('rejects SNS headers that contradict the body', async () => {
    const { env } = fakeEnv();
    const envelope = snsEnvelope(bounce);
    const contradictions: Record<string, string>[] = [
      { 'x-amz-sns-message-type': 'SubscriptionConfirmation' },
      { 'x-amz-sns-message-id': 'other' },
      { 'x-amz-sns-topic-arn': 'arn:aws:sns:us-east-1:123456789012:other' },
    ];
    for (const headers of contradictions) {
      await expectMailwardenError(() => createSesWebhook(env).receive(snsRequest(envelope, headers), auth), 'webhook_unauthorized');
    }
  });

  it('accepts a validly signed message of any age, with the same event keys (no Timestamp limit: see ses.md)', async () => {
    const { env } = fakeEnv();
    const ses = createSesWebhook(env);
    const fresh = snsEnvelope(bounce, { messageId: 'b1f0c4b2-0000-4000-8000-000000000001' });
    const yearOld: Record<string, string> = { ...fresh, Timestamp: new Date(Date.now() - 400 * 24 * 60 * 60 * 1000).toISOString() };
    yearOld.Signature = signEnvelope(yearOld, snsSigningKey);
    const keys = async (envelope: Record<string, string>) =>
      (await ses.receive(snsRequest(envelope), auth)).events.map((event) => event.eventKey);
    // A replay, however late, is the same events under the same keys: the store counts them as duplicates.
    expect(await keys(yearOld)).toStrictEqual(await keys(fresh));
    expect(await keys(yearOld)).toHaveLength(2);
  });

  it('requires an allowlist, and a signature unless told otherwise', async () => {
    const { env } = fakeEnv();
    const ses = createSesWebhook(env);
    const envelope = snsEnvelope(bounce);
    await expectMailwardenError(() => ses.receive(snsRequest(envelope), { topicArns: [] }), 'webhook_unauthorized');
    // A string is not a list: includes() would turn it into a substring test.
    await expectMailwardenError(
      () => ses.receive(snsRequest(envelope), { topicArns: `${topicArn}-and-more` } as never),
      'webhook_unauthorized',
    );
    const { Signature: _, ...unsigned } = envelope;
    await expectMailwardenError(() => ses.receive(snsRequest(unsigned), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => ses.receive(snsRequest({ ...envelope, SignatureVersion: '3' }), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => ses.receive(snsRequest(envelope), { ...auth, signatureRequired: false }), 'webhook_unauthorized');
  });

  describe('basic auth', () => {
    const basicAuth: SesWebhookAuth = { topicArns: [topicArn], basic: [{ username: 'sns', password: 's3cret' }] };
    const authorization = `Basic ${Buffer.from('sns:s3cret').toString('base64')}`;

    it('is checked on top of the signature', async () => {
      const { env, fetchCertificate } = fakeEnv();
      const ses = createSesWebhook(env);
      await expectMailwardenError(() => ses.receive(snsRequest(snsEnvelope(bounce)), basicAuth), 'webhook_unauthorized');
      const wrong = `Basic ${Buffer.from('sns:nope').toString('base64')}`;
      await expectMailwardenError(
        () => ses.receive(snsRequest(snsEnvelope(bounce), { authorization: wrong }), basicAuth),
        'webhook_unauthorized',
      );
      expect(fetchCertificate).not.toHaveBeenCalled();
      expect((await ses.receive(snsRequest(snsEnvelope(bounce), { authorization }), basicAuth)).events).toHaveLength(2);
    });

    it('alone admits notifications when signatureRequired is false, but never a subscription confirmation', async () => {
      const { env, fetchCertificate, confirmSubscription } = fakeEnv();
      const ses = createSesWebhook(env);
      const unsignedAuth = { ...basicAuth, signatureRequired: false };
      const { Signature: _, ...unsigned } = snsEnvelope(bounce);
      expect((await ses.receive(snsRequest(unsigned, { authorization }), unsignedAuth)).events).toHaveLength(2);
      expect(fetchCertificate).not.toHaveBeenCalled();
      const { Signature: __, ...confirmation } = snsEnvelope('confirm', { type: 'SubscriptionConfirmation' });
      await expectMailwardenError(() => ses.receive(snsRequest(confirmation, { authorization }), unsignedAuth), 'webhook_unauthorized');
      expect(confirmSubscription).not.toHaveBeenCalled();
    });
  });

  describe('raw message delivery', () => {
    const rawAuth: SesWebhookAuth = { topicArns: [topicArn], basic: [{ username: 'sns', password: 's3cret' }], signatureRequired: false };
    const authorization = `Basic ${Buffer.from('sns:s3cret').toString('base64')}`;

    it('parses the bare SES JSON, keyed by hash, when basic auth admits it', async () => {
      const { env } = fakeEnv();
      const receipt = await createSesWebhook(env).receive(snsRawRequest(bounce, { authorization }), rawAuth);
      expect(receipt.events.map((event) => [event.type, event.recipient, event.trackingId])).toEqual([
        ['bounced', 'ana@example.org', 'spring-sale'],
        ['bounced', 'Bo@Example.org', 'spring-sale'],
      ]);
      expect(receipt.events.map((event) => event.eventKey)).toEqual(
        parseFixture('bounce-permanent', null).events.map((event) => event.eventKey),
      );
      expect(receipt.events[0]!.eventKey).toMatch(/^[0-9a-f]{64}$/);
    });

    it('answers the "Successfully validated" notice as a ping', async () => {
      const { env } = fakeEnv();
      const request = snsRawRequest('Successfully validated SNS topic for Amazon SES event publishing.', { authorization });
      expect((await createSesWebhook(env).receive(request, rawAuth)).notice).toBe('ping');
    });

    it('is refused while signatures are required, without basic auth, or from an unlisted topic', async () => {
      const { env } = fakeEnv();
      const ses = createSesWebhook(env);
      await expectMailwardenError(
        () => ses.receive(snsRawRequest(bounce, { authorization }), { ...rawAuth, signatureRequired: true }),
        'webhook_unauthorized',
      );
      await expectMailwardenError(() => ses.receive(snsRawRequest(bounce, { authorization }), auth), 'webhook_unauthorized');
      await expectMailwardenError(() => ses.receive(snsRawRequest(bounce), rawAuth), 'webhook_unauthorized');
      await expectMailwardenError(
        () => ses.receive(snsRawRequest(bounce, { authorization, 'x-amz-sns-topic-arn': 'arn:aws:sns:us-east-1:1:x' }), rawAuth),
        'webhook_unauthorized',
      );
      const { 'x-amz-sns-topic-arn': _, ...headers } = snsRawRequest(bounce, { authorization }).headers;
      await expectMailwardenError(() => ses.receive({ ...snsRawRequest(bounce), headers }, rawAuth), 'webhook_unauthorized');
    });

    it('answers a body that is not JSON with invalid_payload', async () => {
      const { env } = fakeEnv();
      await expectMailwardenError(
        () => createSesWebhook(env).receive(snsRawRequest('<xml/>', { authorization }), rawAuth),
        'invalid_payload',
      );
    });
  });

  it('answers bodies that can never be parsed with invalid_payload', async () => {
    const { env } = fakeEnv();
    const ses = createSesWebhook(env);
    const request = (body: string | Uint8Array) => ({
      method: 'POST',
      headers: {},
      rawBody: typeof body === 'string' ? Buffer.from(body) : body,
    });
    await expectMailwardenError(() => ses.receive(request('not json'), auth), 'invalid_payload');
    await expectMailwardenError(() => ses.receive(request(new Uint8Array([0xff, 0xfe])), auth), 'invalid_payload');
    await expectMailwardenError(() => ses.receive(request('[]'), auth), 'invalid_payload');
    await expectMailwardenError(() => ses.receive(request('{"Type":"Other"}'), auth), 'invalid_payload');
    await expectMailwardenError(() => ses.receive(request(fixture('send')), auth), 'invalid_payload');
    const envelope = snsEnvelope('not json');
    await expectMailwardenError(() => ses.receive(snsRequest(envelope), auth), 'invalid_payload');
  });

  it('signs what the simulator signs: a hand-built envelope verifies too', async () => {
    const { env } = fakeEnv();
    const envelope: Record<string, string> = {
      Type: 'Notification',
      MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
      TopicArn: topicArn,
      Subject: 'Amazon SES Email Event Notification',
      Message: fixture('open'),
      Timestamp: '2026-03-05T07:30:13.000Z',
      SignatureVersion: '2',
      SigningCertURL: certificateUrl,
      UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe',
    };
    envelope.Signature = signEnvelope(envelope, snsSigningKey);
    const receipt = await createSesWebhook(env).receive(snsRequest(envelope), auth);
    expect(receipt.events.map((event) => event.eventKey)).toEqual([
      '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324:quinn@example.org',
      '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324:rae@example.org',
    ]);
  });
});
