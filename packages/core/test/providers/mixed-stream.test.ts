import { createHmac, generateKeyPairSync, randomBytes, randomInt, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MailwardenError,
  attachMailgunTrackingId,
  attachMailjetTrackingId,
  attachMandrillTrackingId,
  attachPostmarkTrackingId,
  attachSendGridTrackingId,
  attachSesHeaderTrackingId,
  attachSesTagsTrackingId,
  attachSparkPostTrackingId,
  createMailwarden,
  createMemoryStore,
  type Provider,
  type ProviderAuth,
  type Store,
  type SuppressionReason,
  type WebhookEnvironment,
  type WebhookRequest,
} from '@mailwarden/core';
import { permutationOf } from '../arbitraries.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';
import { mailgunApiUserVariables } from './mailgun.simulator.js';
import { deliverMandrillMessage } from './mandrill.simulator.js';
import { deliverPostmarkMessages } from './postmark.simulator.js';
import { attachPostalTrackingId } from '../../src/carriers/postal.js';
import { postalWebhook } from '../../src/testing/postal.js';
import type { TestEvent } from '../../src/testing/test-event.js';
import { signSendGridBody } from '../../src/testing/sendgrid.js';
import { deliverSendGridMail } from './sendgrid.simulator.js';
import { snsEnvelope, snsRequest, snsSigningCertificate, topicArn, type SentMessage } from '../../src/testing/ses.js';
import { sesV1SendEmail, sesV2SendEmail } from './ses.simulator.js';
import { deliverSparkPostTransmission } from './sparkpost.simulator.js';

// The law of the issue: applyEvents over a realistic mixed stream from all providers, with retries and
// reordering, gives the expected counters per tracking ID and the expected suppressions. Three campaigns
// are sent through the real attach helpers and several providers; the providers' webhook requests
// (simulators where they fit, else built like the fixtures) are ingested in random orders, with provider
// retries and store outages, each run on a fresh mailwarden. The expected values are written out by hand.

/** Non-ASCII with astral characters (🌷, Fraktur 𝔖𝔞𝔩𝔢). Not in the SES tag alphabet: base64url there. */
const SPRING = 'Frühjahr 🌷 Angebot – 𝔖𝔞𝔩𝔢';
/**
 * 101 characters: over Postmark's 80, so split over `service_id` and `service_id_2`. Its spaces and
 * punctuation are outside the SES tag alphabet, so the tag holds base64url (138 characters, within 256).
 */
const DIGEST = 'Quarterly digest: product updates, pricing changes & partner news for April 2026 — EU/UK edition (v2)';
/**
 * 59 code points but 194 bytes of UTF-8: `{"service_id":…}` is 211 bytes, over Mandrill's 200, and its
 * base64url is 259 characters, over the SES tag limit of 256. SES carries it in the X-Service-Id header.
 */
const LAUNCH = `Launch 🚀 ${'🌟'.repeat(44)} day 1`;

const PROJECT = 'shop';
const T0 = Date.parse('2026-04-01T09:00:00Z');
const now = Date.parse('2026-04-01T12:00:00Z');
const nowSeconds = Math.floor(now / 1000);
/** Unix seconds, `minutes` after the campaigns went out. */
const at = (minutes: number): number => Math.floor(T0 / 1000) + minutes * 60;
const iso = (minutes: number): string => new Date(T0 + minutes * 60_000).toISOString();

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const randomId = (): string => randomBytes(12).toString('base64url');
const basicHeader = ({ username, password }: { username: string; password: string }) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
/** Non-ASCII as `\uXXXX` escapes, as Python's json.dumps and PHP's json_encode write it (still the same JSON). */
const escapeNonAscii = (json: string): string =>
  json.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

// The project's provider secrets, generated per run.
const sendgridKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const mailgunSigningKey = randomBytes(16).toString('hex');
const sparkpostCredentials = { username: 'sparkpost', password: randomId() };
const postmarkCredentials = { username: 'postmark', password: randomId() };
const mandrillKey = randomId();
const mandrillUrl = `https://mail.example.com/projects/${PROJECT}/webhooks/mandrill`;
const mailjetCredentials = { username: 'mailjet', password: randomId() };
const postalKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });

const auth: ProviderAuth = {
  ses: { topicArns: [topicArn] },
  sendgrid: { publicKey: sendgridKeys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64') },
  mailgun: { signingKey: mailgunSigningKey },
  sparkpost: { basic: [sparkpostCredentials] },
  postmark: { basic: [postmarkCredentials] },
  mandrill: { webhookKey: mandrillKey, url: mandrillUrl },
  mailjet: { basic: [mailjetCredentials] },
  postal: { publicKey: postalKeys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64') },
};
const environment: WebhookEnvironment = {
  now: () => now,
  fetchCertificate: async () => snsSigningCertificate,
  confirmSubscription: () => Promise.reject(new Error('no subscription handshake in this stream')),
};

/** One webhook POST of the stream. */
interface Post {
  label: string;
  provider: Provider;
  request: WebhookRequest;
  /** What the provider posts when it retries. */
  resend: () => WebhookRequest;
  /** Delivery events in it (one per recipient of each provider event). */
  events: number;
}

const post = (label: string, provider: Provider, request: WebhookRequest, events: number): Post => ({
  label,
  provider,
  request,
  resend: () => request,
  events,
});

function errorCode(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof MailwardenError ? error.code : String(error);
  }
  return undefined;
}

// ---- Amazon SES (configuration-set event publishing through SNS) ----------------------------------

const sesV2Request = (to: string[]) => ({
  FromEmailAddress: 'news@example.com',
  Destination: { ToAddresses: to },
  Content: { Simple: { Subject: { Data: 'Hello' }, Body: { Text: { Data: 'Hi' } } } },
  ConfigurationSetName: 'tracking',
});

/** An SES event notification about `sent`, as SNS posts it (fixtures/ses/*.json). */
function sesPost(
  label: string,
  sent: SentMessage,
  eventType: string,
  detailKey: string,
  detail: Record<string, unknown>,
  events: number,
): Post {
  const mail = {
    timestamp: iso(0),
    source: 'news@example.com',
    sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/example.com',
    sendingAccountId: '123456789012',
    messageId: sent.messageId,
    destination: sent.destination,
    headersTruncated: false,
    headers: sent.headers,
    commonHeaders: { from: ['news@example.com'], to: sent.destination, subject: 'Hello' },
    tags: { 'ses:operation': ['SendEmail'], 'ses:configuration-set': ['tracking'], ...sent.tags },
  };
  // SNS keeps MessageId and signature on retries: a retry is the same request.
  return post(label, 'ses', snsRequest(snsEnvelope(JSON.stringify({ eventType, mail, [detailKey]: detail }))), events);
}

const sesDelivery = (recipient: string, minutes: number) => ({
  timestamp: iso(minutes),
  processingTimeMillis: 912,
  recipients: [recipient],
  smtpResponse: '250 2.0.0 OK',
  reportingMTA: 'a8-50.smtp-out.amazonses.com',
});
const sesBounce = (bounceType: string, bounceSubType: string, recipients: string[], minutes: number) => ({
  bounceType,
  bounceSubType,
  bouncedRecipients: recipients.map((emailAddress) => ({
    emailAddress,
    action: 'failed',
    status: '5.1.1',
    diagnosticCode: 'smtp; 550 5.1.1 user unknown',
  })),
  timestamp: iso(minutes),
  feedbackId: randomId(),
  reportingMTA: 'dsn; a8-50.smtp-out.amazonses.com',
});
const sesComplaint = (recipient: string, feedbackType: string, minutes: number) => ({
  feedbackId: randomId(),
  complaintSubType: null,
  complainedRecipients: [{ emailAddress: recipient }],
  timestamp: iso(minutes),
  userAgent: 'ExampleISP-FBL/1.0',
  complaintFeedbackType: feedbackType,
  arrivalDate: iso(minutes),
});

function sesPosts() {
  const ana = sesV2SendEmail(attachSesTagsTrackingId(sesV2Request(['ana@example.org']), SPRING, { api: 'v2' }));
  const group = sesV2SendEmail(
    attachSesTagsTrackingId(sesV2Request(['bo@example.org', 'cy@example.net', 'Dee@Example.NET']), SPRING, { api: 'v2' }),
  );
  const ivy = sesV2SendEmail(attachSesTagsTrackingId(sesV2Request(['ivy@example.org']), SPRING, { api: 'v2' }));
  const gus = sesV2SendEmail(attachSesTagsTrackingId(sesV2Request(['gus@example.net']), DIGEST, { api: 'v2' }));
  const gone = sesV1SendEmail(
    attachSesTagsTrackingId(
      {
        Source: 'news@example.com',
        Destination: { ToAddresses: ['gone@example.org'] },
        Message: { Subject: { Data: 'Hello' } },
        ConfigurationSetName: 'tracking',
      },
      DIGEST,
      { api: 'v1' },
    ),
  );
  const launchTags = errorCode(() => attachSesTagsTrackingId(sesV2Request(['hal@example.org']), LAUNCH, { api: 'v2' }));
  const hal = sesV2SendEmail(attachSesHeaderTrackingId(sesV2Request(['hal@example.org']), LAUNCH));
  const posts = [
    sesPost('ses ana delivery', ana, 'Delivery', 'delivery', sesDelivery('ana@example.org', 1), 1),
    sesPost('ses ana open', ana, 'Open', 'open', { timestamp: iso(30), ipAddress: '192.0.2.1', userAgent: 'Mozilla/5.0' }, 1),
    sesPost(
      'ses ana click',
      ana,
      'Click',
      'click',
      { timestamp: iso(31), ipAddress: '192.0.2.1', userAgent: 'Mozilla/5.0', link: 'https://example.com/spring', linkTags: {} },
      1,
    ),
    sesPost('ses bo delivery', group, 'Delivery', 'delivery', sesDelivery('bo@example.org', 1), 1),
    // One notification bouncing two recipients of the same message.
    sesPost('ses cy+dee bounce', group, 'Bounce', 'bounce', sesBounce('Permanent', 'General', ['cy@example.net', 'Dee@Example.NET'], 2), 2),
    sesPost('ses ivy soft bounce', ivy, 'Bounce', 'bounce', sesBounce('Transient', 'MailboxFull', ['ivy@example.org'], 3), 1),
    sesPost('ses gus delivery', gus, 'Delivery', 'delivery', sesDelivery('gus@example.net', 1), 1),
    sesPost('ses gus not-spam', gus, 'Complaint', 'complaint', sesComplaint('gus@example.net', 'not-spam', 60), 1),
    sesPost(
      'ses gone suppressed',
      gone,
      'Bounce',
      'bounce',
      sesBounce('Permanent', 'OnAccountSuppressionList', ['gone@example.org'], 0),
      1,
    ),
    sesPost('ses hal delivery', hal, 'Delivery', 'delivery', sesDelivery('hal@example.org', 1), 1),
    sesPost('ses hal complaint', hal, 'Complaint', 'complaint', sesComplaint('hal@example.org', 'abuse', 90), 1),
  ];
  return {
    posts,
    carried: {
      springTags: ana.tags,
      digestTags: gus.tags,
      launchTags,
      launchHeader: hal.headers.find((h) => h.name === 'X-Service-Id')?.value,
    },
  };
}

// ---- SendGrid ------------------------------------------------------------------------------------

/** The `processed` events SendGrid reports for a send request, one per recipient, custom args flattened in. */
const sendgridProcessed = (request: unknown, seconds: number): Record<string, unknown>[] =>
  JSON.parse(decoder.decode(deliverSendGridMail(request, 'processed', seconds))) as Record<string, unknown>[];

/** A later event of the same message and recipient. */
const sendgridEvent = (base: Record<string, unknown>, event: string, seconds: number, extra: Record<string, unknown> = {}) => ({
  ...base,
  event,
  timestamp: seconds,
  sg_event_id: randomId(),
  ...extra,
});

function sendgridPost(label: string, events: Record<string, unknown>[]): Post {
  const signed = (items: Record<string, unknown>[]): WebhookRequest => {
    const rawBody = encoder.encode(`[${items.map((item) => JSON.stringify(item)).join(',\r\n')}]\r\n`);
    const timestamp = String(nowSeconds);
    return {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-twilio-email-event-webhook-signature': signSendGridBody(sendgridKeys.privateKey, timestamp, rawBody),
        'x-twilio-email-event-webhook-timestamp': timestamp,
      },
      rawBody,
    };
  };
  // SendGrid retries a batch with new sg_event_ids (docs/providers/sendgrid.md#message-id-and-dedup-key), so a retry is different bytes, signed anew.
  return {
    label,
    provider: 'sendgrid',
    request: signed(events),
    resend: () => signed(events.map((item) => ({ ...item, sg_event_id: randomId() }))),
    events: events.length,
  };
}

function sendgridPosts(): Post[] {
  const mail = (to: string[]) => ({
    from: { email: 'news@example.com' },
    subject: 'Hello',
    content: [{ type: 'text/plain', value: 'Hi' }],
    personalizations: to.map((email) => ({ to: [{ email }] })),
  });
  const [jane, john, kim] = sendgridProcessed(
    attachSendGridTrackingId(mail(['jane@example.com', 'john@example.com', 'kim@example.com']), SPRING),
    at(0),
  );
  const [lou] = sendgridProcessed(attachSendGridTrackingId(mail(['lou@example.com']), LAUNCH), at(5));
  // The receiving server bounced after accepting: SendGrid has no sg_message_id and no custom args for it.
  const asyncBounce = {
    email: 'late@example.org',
    timestamp: at(120),
    event: 'bounce',
    sg_event_id: randomId(),
    reason: '550 5.1.1 <late@example.org>: Recipient address rejected: User unknown',
    status: '5.1.1',
    type: 'bounce',
  };
  return [
    sendgridPost('sendgrid batch 1', [
      jane!,
      john!,
      sendgridEvent(jane!, 'delivered', at(1), { response: '250 OK' }),
      sendgridEvent(john!, 'bounce', at(1), { type: 'bounce', reason: '550 5.1.1 The email account does not exist.', status: '5.1.1' }),
      // kim is on SendGrid's own bounce list: dropped, never processed.
      sendgridEvent(kim!, 'dropped', at(0), { reason: 'Bounced Address', status: '5.0.0' }),
    ]),
    sendgridPost('sendgrid batch 2', [
      sendgridEvent(jane!, 'open', at(40), { useragent: 'Mozilla/5.0', ip: '192.0.2.7' }),
      sendgridEvent(jane!, 'click', at(41), { url: 'https://example.com/spring', useragent: 'Mozilla/5.0' }),
      lou!,
      sendgridEvent(lou!, 'deferred', at(6), { response: '421 4.7.0 try again later', attempt: '1' }),
      sendgridEvent(lou!, 'delivered', at(20), { response: '250 OK' }),
    ]),
    sendgridPost('sendgrid batch 3', [sendgridEvent(lou!, 'spamreport', at(90)), asyncBounce]),
  ];
}

// ---- Mailgun (current JSON webhooks, one event per POST; fixtures/mailgun/event-data.json) ---------

function mailgunPost(
  label: string,
  variables: Record<string, unknown>,
  messageId: string,
  recipient: string,
  event: string,
  seconds: number,
  extra: Record<string, unknown> = {},
): Post {
  const timestamp = String(nowSeconds);
  const token = randomBytes(25).toString('hex');
  const body = {
    signature: {
      timestamp,
      token,
      signature: createHmac('sha256', mailgunSigningKey)
        .update(timestamp + token)
        .digest('hex'),
    },
    'event-data': {
      event,
      id: randomId(),
      timestamp: seconds + 0.25,
      'log-level': event === 'failed' ? 'error' : 'info',
      recipient,
      'recipient-domain': recipient.split('@')[1],
      message: { headers: { to: recipient, 'message-id': messageId, from: 'News <news@mg.example.com>', subject: 'Hello' } },
      'user-variables': variables,
      ...extra,
    },
  };
  // Mailgun resends the original signature block: a retry is the same request.
  return post(
    label,
    'mailgun',
    { method: 'POST', headers: { 'content-type': 'application/json' }, rawBody: encoder.encode(escapeNonAscii(JSON.stringify(body))) },
    1,
  );
}

function mailgunPosts(): Post[] {
  const fields = (to: string) => ({ from: 'News <news@mg.example.com>', to, subject: 'Hello', text: 'Hi', 'v:plan': 'pro' });
  const mia = mailgunApiUserVariables(attachMailgunTrackingId(fields('mia@example.com'), SPRING));
  const ned = mailgunApiUserVariables(attachMailgunTrackingId(fields('ned@example.com'), SPRING, { via: 'header' }));
  const kim = mailgunApiUserVariables(attachMailgunTrackingId(fields('kim@example.com'), SPRING));
  const [miaId, nedId, kimId] = [1, 2, 3].map((n) => `20260401090000.${n}.${randomBytes(8).toString('hex').toUpperCase()}@mg.example.com`);
  const status = (code: number, message: string) => ({ 'delivery-status': { code, message, description: '', 'attempt-no': 1 } });
  return [
    mailgunPost('mailgun mia accepted', mia, miaId!, 'mia@example.com', 'accepted', at(0)),
    mailgunPost('mailgun mia temporary failure', mia, miaId!, 'mia@example.com', 'failed', at(1), {
      severity: 'temporary',
      reason: 'generic',
      ...status(452, '4.2.2 Mailbox full'),
    }),
    mailgunPost('mailgun mia delivered', mia, miaId!, 'mia@example.com', 'delivered', at(10), status(250, 'OK')),
    mailgunPost('mailgun mia opened', mia, miaId!, 'mia@example.com', 'opened', at(50)),
    mailgunPost('mailgun ned accepted', ned, nedId!, 'ned@example.com', 'accepted', at(0)),
    mailgunPost('mailgun ned bounce', ned, nedId!, 'ned@example.com', 'failed', at(1), {
      severity: 'permanent',
      reason: 'bounce',
      ...status(550, '5.1.1 user unknown'),
    }),
    // kim is on Mailgun's complaint list.
    mailgunPost('mailgun kim suppress-complaint', kim, kimId!, 'kim@example.com', 'failed', at(0), {
      severity: 'permanent',
      reason: 'suppress-complaint',
      ...status(607, 'Not delivering to a user who marked your messages as spam'),
    }),
  ];
}

// ---- Postmark (one record per POST; fixtures/postmark/*.json) ---------------------------------------

/** A record as Postmark posts it; `id` is written as a bare JSON number, digits exactly as given. */
function postmarkPost(label: string, record: Record<string, unknown>, id?: string): Post {
  const text = id === undefined ? JSON.stringify(record) : JSON.stringify({ ...record, ID: '__ID__' }).replace('"__ID__"', id);
  const request: WebhookRequest = {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basicHeader(postmarkCredentials) },
    rawBody: encoder.encode(text),
  };
  return post(label, 'postmark', request, 1);
}

/** What the simulator posts for one message, and its record, for building the message's later records. */
function postmarkSent(to: string, trackingId: string, record: 'Delivery' | 'Bounce') {
  const message = attachPostmarkTrackingId({ From: 'news@example.com', To: to, Subject: 'Hello', TextBody: 'Hi' }, trackingId);
  const [sent] = deliverPostmarkMessages(message, { record, escapeNonAscii: true, credentials: postmarkCredentials });
  const text = decoder.decode(sent!.request.rawBody);
  return { request: sent!.request, text, record: JSON.parse(text) as { MessageID: string; Metadata: Record<string, string> } };
}

function postmarkPosts() {
  const pat = postmarkSent('pat@example.com', DIGEST, 'Delivery');
  const quinn = postmarkSent('quinn@example.com', DIGEST, 'Bounce');
  const rae = postmarkSent('rae@example.com', SPRING, 'Delivery');
  const sam = postmarkSent('sam@example.com', DIGEST, 'Delivery');
  const opened = { MessageStream: 'outbound', FirstOpen: true, Platform: 'WebMail', ReadSeconds: 5, Tag: '', UserAgent: 'Mozilla/5.0' };
  const posts = [
    post('postmark pat delivery', 'postmark', pat.request, 1),
    postmarkPost('postmark pat open', {
      RecordType: 'Open',
      ...opened,
      Metadata: pat.record.Metadata,
      Recipient: 'pat@example.com',
      MessageID: pat.record.MessageID,
      ReceivedAt: iso(35),
    }),
    postmarkPost('postmark pat click', {
      RecordType: 'Click',
      MessageStream: 'outbound',
      ClickLocation: 'HTML',
      Platform: 'Desktop',
      OriginalLink: 'https://example.com/digest',
      Metadata: pat.record.Metadata,
      Recipient: 'pat@example.com',
      MessageID: pat.record.MessageID,
      ReceivedAt: iso(36),
    }),
    // quinn's and sam's bounce IDs differ only beyond 2^53: JSON.parse reads both as 9007199254740992.
    post(
      'postmark quinn hard bounce',
      'postmark',
      { ...quinn.request, rawBody: encoder.encode(quinn.text.replace(/"ID":\d+/, '"ID":9007199254740993')) },
      1,
    ),
    postmarkPost(
      'postmark sam soft bounce',
      {
        RecordType: 'Bounce',
        MessageStream: 'outbound',
        Type: 'SoftBounce',
        TypeCode: 4096,
        Name: 'Soft bounce',
        MessageID: sam.record.MessageID,
        Metadata: sam.record.Metadata,
        Details: 'smtp;452 4.2.2 The email account that you tried to reach is over quota.',
        Email: 'sam@example.com',
        From: 'news@example.com',
        BouncedAt: iso(4),
        Inactive: false,
        CanActivate: true,
      },
      '9007199254740992',
    ),
    post('postmark rae delivery', 'postmark', rae.request, 1),
    postmarkPost(
      'postmark rae spam complaint',
      {
        RecordType: 'SpamComplaint',
        MessageStream: 'outbound',
        Type: 'SpamComplaint',
        TypeCode: 100001,
        Name: 'Spam complaint',
        MessageID: rae.record.MessageID,
        Metadata: rae.record.Metadata,
        Email: 'rae@example.com',
        From: 'news@example.com',
        BouncedAt: iso(80),
        Inactive: true,
        CanActivate: false,
      },
      '4323372036854775807',
    ),
  ];
  return { posts, carried: { digestMetadata: pat.record.Metadata } };
}

// ---- SparkPost (batches of `{ msys: { <class>: event } }`; fixtures/sparkpost/all-events.json) -------

/** The `message_event` SparkPost reports per recipient of a transmission, as templates for its other events. */
const sparkpostRecipients = (transmission: object, trackingId: string): Record<string, unknown>[] =>
  (
    JSON.parse(
      decoder.decode(
        deliverSparkPostTransmission(attachSparkPostTrackingId(transmission, trackingId), sparkpostCredentials).request.rawBody,
      ),
    ) as {
      msys: { message_event: Record<string, unknown> };
    }[]
  ).map((item) => item.msys.message_event);

const sparkpostEvent = (template: Record<string, unknown>, type: string, seconds: number, extra: Record<string, unknown> = {}) => ({
  msys: {
    [type === 'open' || type === 'click' ? 'track_event' : 'message_event']: {
      ...template,
      type,
      event_id: String(randomInt(1, 2 ** 47)),
      timestamp: String(seconds),
      ...extra,
    },
  },
  cust: { id: '1' },
});

function sparkpostPost(label: string, items: object[]): Post {
  const request: WebhookRequest = {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: basicHeader(sparkpostCredentials),
      'x-messagesystems-batch-id': randomId(),
    },
    rawBody: encoder.encode(JSON.stringify(items)),
  };
  // SparkPost retries the same batch, event_ids kept.
  return post(label, 'sparkpost', request, items.length);
}

function sparkpostPosts(): Post[] {
  const content = { from: 'news@example.com', subject: 'Hello', text: 'Hi' };
  const [tia, uma, vic] = sparkpostRecipients(
    {
      campaign_id: 'digest',
      recipients: [
        { address: 'tia@example.net' },
        { address: { email: 'uma@example.net' } },
        { address: 'vic@example.net', metadata: { tier: 'gold' } },
      ],
      content,
    },
    DIGEST,
  );
  const [wes, xan] = sparkpostRecipients(
    { campaign_id: 'launch', recipients: [{ address: 'wes@example.net' }, { address: 'xan@example.net' }], content },
    LAUNCH,
  );
  return [
    sparkpostPost(
      'sparkpost batch 1',
      [tia!, uma!, vic!, wes!, xan!].map((template) => sparkpostEvent(template, 'injection', at(0))),
    ),
    sparkpostPost('sparkpost batch 2', [
      sparkpostEvent(tia!, 'delivery', at(1)),
      sparkpostEvent(uma!, 'bounce', at(1), {
        bounce_class: '10',
        reason: '550 5.1.1 ...User unknown',
        raw_reason: '550 5.1.1 <uma@example.net>: User unknown',
      }),
      sparkpostEvent(vic!, 'delay', at(1), { reason: '452 4.2.2 Mailbox full' }),
      sparkpostEvent(wes!, 'delivery', at(2)),
      sparkpostEvent(xan!, 'bounce', at(2), { bounce_class: '21', reason: '451 4.4.0 DNS resolution failed' }),
    ]),
    sparkpostPost('sparkpost batch 3', [
      sparkpostEvent(tia!, 'open', at(20), { user_agent: 'Mozilla/5.0' }),
      sparkpostEvent(tia!, 'click', at(21), { target_link_url: 'https://example.com/digest' }),
      sparkpostEvent(vic!, 'delivery', at(30)),
      sparkpostEvent(vic!, 'spam_complaint', at(95), { fbtype: 'abuse', report_by: 'fbl.example.net' }),
    ]),
  ];
}

// ---- Mandrill (batches in the `mandrill_events` form field; fixtures/mandrill/events.json) ---------

type MandrillEvent = { event: string; _id: string; ts: number; msg: Record<string, unknown> } & Record<string, unknown>;

/** The `send` events Mandrill reports for a send request, one per recipient, as templates for later events. */
const mandrillSent = (request: unknown): MandrillEvent[] => {
  const { request: sent } = deliverMandrillMessage(request, {
    webhookKey: mandrillKey,
    url: mandrillUrl,
    event: 'send',
    escapeNonAscii: false,
  });
  return JSON.parse(new URLSearchParams(decoder.decode(sent.rawBody)).get('mandrill_events')!) as MandrillEvent[];
};

const mandrillEvent = (
  template: MandrillEvent,
  event: string,
  seconds: number,
  msg: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) => ({
  ...template,
  event,
  ts: seconds,
  msg: { ...template.msg, ...msg },
  ...extra,
});

function mandrillPost(label: string, events: object[]): Post {
  // PHP's json_encode, as Mandrill writes it: "/" as "\/" and non-ASCII escaped.
  const json = escapeNonAscii(JSON.stringify(events).replace(/\//g, '\\/'));
  const signature = createHmac('sha1', mandrillKey).update(`${mandrillUrl}mandrill_events${json}`).digest('base64');
  const request: WebhookRequest = {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-mandrill-signature': signature },
    rawBody: encoder.encode(new URLSearchParams({ mandrill_events: json }).toString()),
  };
  return post(label, 'mandrill', request, events.length);
}

function mandrillPosts() {
  const message = (to: string[], userId: number) => ({
    message: {
      from_email: 'news@example.com',
      to: to.map((email) => ({ email })),
      subject: 'Hello',
      text: 'Hi',
      metadata: { user_id: userId },
    },
  });
  const [yan, zoe] = mandrillSent(attachMandrillTrackingId(message(['yan@example.net', 'zoe@example.net'], 7), DIGEST));
  // LAUNCH does not fit Mandrill's metadata: the sender sends that message without a tracking ID.
  const launch = message(['abe@example.net', 'bea@example.net'], 8);
  const launchAttach = errorCode(() => attachMandrillTrackingId(launch, LAUNCH));
  const [abe, bea] = mandrillSent(launch);
  const posts = [
    mandrillPost(
      'mandrill batch 1',
      [yan!, zoe!, abe!, bea!].map((template) => mandrillEvent(template, 'send', at(0))),
    ),
    mandrillPost('mandrill batch 2', [
      mandrillEvent(yan!, 'delivered', at(1)),
      mandrillEvent(zoe!, 'hard_bounce', at(1), {
        state: 'bounced',
        bounce_description: 'bad_mailbox',
        diag: 'smtp;550 5.1.1 User unknown',
      }),
      mandrillEvent(abe!, 'open', at(25), {}, { ip: '192.0.2.9', user_agent: 'Mozilla/5.0' }),
      mandrillEvent(abe!, 'click', at(26), {}, { url: 'https://example.com/launch' }),
    ]),
    mandrillPost('mandrill batch 3', [mandrillEvent(yan!, 'open', at(45)), mandrillEvent(bea!, 'spam', at(100), { state: 'spam' })]),
  ];
  return { posts, carried: { launchAttach } };
}

// ---- Mailjet (grouped arrays and single events; MessageID past 2^53; fixtures/mailjet/*.json) ------

type MailjetTemplate = { email: string; MessageID: string; Payload: string };

/** What Mailjet echoes of each message of a Send API v3.1 request: its EventPayload, under the MessageID it answered. */
const mailjetSent = (request: { Messages: Record<string, unknown>[] }): MailjetTemplate[] =>
  request.Messages.map((message, index) => ({
    email: (message['To'] as { Email: string }[])[0]!.Email,
    MessageID: String(1152921504606847000n + BigInt(index)),
    Payload: message['EventPayload'] as string,
  }));

/** One Mailjet event's JSON text, `MessageID` a bare integer as Mailjet writes it. */
const mailjetEvent = (template: MailjetTemplate, event: string, time: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    event,
    time,
    MessageID: '__MESSAGE_ID__',
    Message_GUID: `guid-${template.MessageID}`,
    email: template.email,
    mj_campaign_id: 0,
    mj_contact_id: 0,
    customcampaign: '',
    CustomID: '',
    Payload: template.Payload,
    ...extra,
  }).replace('"__MESSAGE_ID__"', template.MessageID);

function mailjetPost(label: string, items: string[], grouped = true): Post {
  const body = grouped ? `[${items.join(',')}]` : items[0]!;
  const request = {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basicHeader(mailjetCredentials) },
    rawBody: encoder.encode(body),
  };
  return post(label, 'mailjet', request, items.length);
}

function mailjetPosts() {
  const send = attachMailjetTrackingId(
    {
      Messages: ['ola@example.net', 'pia@example.net', 'ren@example.net', 'sid@example.net'].map((Email, index) => ({
        From: { Email: 'news@example.com' },
        To: [{ Email }],
        Subject: 'Hello',
        TextPart: 'Hi',
        // The sender's own payload: kept beside the tracking ID.
        ...(index === 0 ? { EventPayload: '{"segment":"vip"}' } : {}),
      })),
    },
    LAUNCH,
  );
  const [ola, pia, ren, sid] = mailjetSent(send);
  const posts = [
    mailjetPost('mailjet batch 1', [
      mailjetEvent(ola!, 'sent', at(1), { smtp_reply: '250 2.0.0 OK' }),
      mailjetEvent(pia!, 'bounce', at(1), {
        blocked: true,
        hard_bounce: true,
        error_related_to: 'recipient',
        error: 'user unknown',
        comment: '550 5.1.1 <pia@example.net>: User unknown',
      }),
      // Not attempted: the address bounced recently (Mailjet's own list).
      mailjetEvent(ren!, 'blocked', at(0), { error_related_to: 'recipient', error: 'preblocked' }),
      mailjetEvent(sid!, 'bounce', at(1), { blocked: false, hard_bounce: false, error_related_to: 'domain', error: 'greylisted' }),
    ]),
    // Version 1: one bare event per POST.
    mailjetPost('mailjet single', [mailjetEvent(sid!, 'sent', at(10), { smtp_reply: '250 OK' })], false),
    mailjetPost('mailjet batch 2', [
      mailjetEvent(ola!, 'open', at(20), { agent: 'Mozilla/5.0' }),
      mailjetEvent(ola!, 'spam', at(90), { source: 'JMRPP' }),
    ]),
  ];
  return { posts, carried: { mailjetPayload: send.Messages[0]!['EventPayload'] as string } };
}

// ---- Postal (one RSA-signed event per POST; the tag is the tracking ID; a retry keeps its uuid) ----

function postalPosts(): Post[] {
  // Postal's one tag holds DIGEST as it is.
  const tag = attachPostalTrackingId({ to: ['ula@example.org'], from: 'news@example.com', subject: 'Digest' }, DIGEST).tag;
  const messageId = `${randomUUID()}@rp.postal.example.com`;
  const postalPost = (label: string, event: TestEvent): Post =>
    post(label, 'postal', postalWebhook({ events: [{ ...event, trackingId: tag, messageId }], privateKey: postalKeys.privateKey }), 1);
  const minutes = (n: number) => new Date(T0 + n * 60_000);
  return [
    postalPost('postal ula sent', { type: 'delivered', recipient: 'ula@example.org', occurredAt: minutes(2) }),
    postalPost('postal ula loaded', { type: 'opened', recipient: 'ula@example.org', occurredAt: minutes(30) }),
    // A permanent SMTP refusal: a hard bounce.
    postalPost('postal val failed', { type: 'bounced', bounceClass: 'hard', recipient: 'val@example.org', occurredAt: minutes(3) }),
    // Delayed, then failed after the maximum delivery attempts: a soft bounce, no suppression.
    postalPost('postal wyn delayed', { type: 'deferred', recipient: 'wyn@example.org', occurredAt: minutes(4) }),
    postalPost('postal wyn failed', { type: 'bounced', bounceClass: 'soft', recipient: 'wyn@example.org', occurredAt: minutes(120) }),
  ];
}

// ---- The stream ----------------------------------------------------------------------------------

function buildStream() {
  const ses = sesPosts();
  const postmark = postmarkPosts();
  const mandrill = mandrillPosts();
  const mailjet = mailjetPosts();
  return {
    posts: [
      ...ses.posts,
      ...sendgridPosts(),
      ...mailgunPosts(),
      ...postmark.posts,
      ...sparkpostPosts(),
      ...mandrill.posts,
      ...mailjet.posts,
      ...postalPosts(),
    ],
    carried: { ...ses.carried, ...postmark.carried, ...mandrill.carried, ...mailjet.carried },
  };
}

/** The memory store; `failNext()` makes the next `applyEvents` fail as an unreachable store would. */
function storeWithOutages(): { store: Store; failNext: () => void } {
  const store = createMemoryStore();
  let down = false;
  return {
    store: {
      ...store,
      async applyEvents(projectId, events) {
        if (!down) return store.applyEvents(projectId, events);
        down = false;
        throw new MailwardenError('store_unavailable', 'The store did not answer.');
      },
    },
    failNext: () => {
      down = true;
    },
  };
}

describe('a realistic mixed stream from all six providers', () => {
  const stream = buildStream();

  it('exercises the carriers at their limits', () => {
    const b64u = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
    expect(stream.carried.springTags).toEqual({ service_id: [b64u(SPRING)], service_id_enc: ['b64u'] });
    expect(stream.carried.digestTags).toEqual({ service_id: [b64u(DIGEST)], service_id_enc: ['b64u'] });
    expect(stream.carried.launchTags).toBe('tracking_id_not_carriable');
    expect(stream.carried.launchHeader).toMatch(/^=\?UTF-8\?B\?\S+\?=( =\?UTF-8\?B\?\S+\?=)+$/);
    expect(stream.carried.digestMetadata).toEqual({ service_id: DIGEST.slice(0, 80), service_id_2: DIGEST.slice(80) });
    expect(stream.carried.launchAttach).toBe('tracking_id_not_carriable');
    // Mailjet: the sender's own EventPayload keys kept beside the ID, written in ASCII.
    expect(stream.carried.mailjetPayload).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(stream.carried.mailjetPayload)).toEqual({ segment: 'vip', service_id: LAUNCH });
  });

  it('gives the expected counters, messages and suppressions whatever the order, retries and store outages', async () => {
    const { posts } = stream;
    // 11 SES, 3 SendGrid, 7 Mailgun, 7 Postmark, 3 SparkPost, 3 Mandrill, 3 Mailjet and 5 Postal POSTs.
    expect(posts.map((p) => p.provider).join(' ')).toBe(
      [
        ...Array(11).fill('ses'),
        ...Array(3).fill('sendgrid'),
        ...Array(7).fill('mailgun'),
        ...Array(7).fill('postmark'),
        ...Array(3).fill('sparkpost'),
        ...Array(3).fill('mandrill'),
        ...Array(3).fill('mailjet'),
        ...Array(5).fill('postal'),
      ].join(' '),
    );
    const indexes = fc.nat(posts.length - 1);
    const deliveries = fc
      .record({ retries: fc.array(indexes, { maxLength: 12 }), outages: fc.uniqueArray(indexes, { maxLength: 4 }) })
      // An outage's first attempt fails, so it always comes again: it is in the list twice.
      .chain(({ retries, outages }) =>
        permutationOf([...posts.keys(), ...retries, ...outages]).map((order) => ({ order, outages: new Set(outages) })),
      );

    await fc.assert(
      fc.asyncProperty(deliveries, async ({ order, outages }) => {
        const { store, failNext } = storeWithOutages();
        const mailwarden = createMailwarden({ store, webhooks: { auth: { [PROJECT]: auth }, environment } });
        const attempts = new Map<number, number>();
        const stored = new Set<number>();
        for (const index of order) {
          const p = posts[index]!;
          const attempt = attempts.get(index) ?? 0;
          attempts.set(index, attempt + 1);
          const request = attempt === 0 ? p.request : p.resend();
          if (attempt === 0 && outages.has(index)) {
            failNext();
            await expectMailwardenError(() => mailwarden.ingestWebhook(p.provider, PROJECT, request), 'store_unavailable');
          } else if (!stored.has(index)) {
            expect(await mailwarden.ingestWebhook(p.provider, PROJECT, request), p.label).toEqual({
              accepted: p.events,
              duplicates: 0,
              skipped: 0,
              warnings: [],
            });
            stored.add(index);
          } else {
            // Every provider's retry is counted as duplicates; Mailgun's resends its signature block
            // unchanged, so its claimed token meets the same body again.
            expect(await mailwarden.ingestWebhook(p.provider, PROJECT, request), p.label).toEqual({
              accepted: 0,
              duplicates: p.events,
              skipped: 0,
              warnings: [],
            });
          }
        }

        const trackingIds = (await mailwarden.trackingIds.list(PROJECT, { limit: 100 })).items;
        expect(
          Object.fromEntries(
            trackingIds.map(({ trackingId, messages, delivered, bounced, complained }) => [
              trackingId,
              { messages, delivered, bounced, complained },
            ]),
          ),
        ).toEqual({
          // SES ana, bo (delivered), cy, dee (one hard-bounce notification), ivy (soft bounce);
          // SendGrid jane (delivered), john (hard bounce), kim (dropped: rejected);
          // Mailgun mia (delayed, then delivered), ned (hard bounce), kim (suppress-complaint: rejected);
          // Postmark rae (delivered, then a complaint).
          // 5 + 3 + 3 + 1 = 12 messages; delivered ana, bo, jane, mia, rae; bounced cy, dee, ivy, john, ned.
          [SPRING]: { messages: 12, delivered: 5, bounced: 5, complained: 1 },
          // SES gus (delivered; the not-spam complaint counts nothing), gone (on the account suppression list: rejected);
          // Postmark pat (delivered), quinn (hard bounce), sam (soft bounce);
          // SparkPost tia (delivered), uma (hard bounce), vic (delayed, delivered, complaint);
          // Mandrill yan (delivered), zoe (hard bounce);
          // Postal ula (delivered, opened), val (hard bounce), wyn (delayed, then failed after the maximum attempts: soft).
          // 2 + 3 + 3 + 2 + 3 = 13 messages; delivered gus, pat, tia, vic, yan, ula; bounced quinn, sam, uma, zoe, val, wyn.
          [DIGEST]: { messages: 13, delivered: 6, bounced: 6, complained: 1 },
          // SES hal (delivered, complaint); SendGrid lou (deferred, delivered, complaint); SparkPost wes
          // (delivered), xan (soft bounce). Mandrill could not carry it: those messages have no tracking ID.
          // Mailjet ola (delivered, complaint), pia (hard bounce), ren (preblocked: rejected), sid (greylisted, delivered).
          // 4 + 4 = 8 messages; delivered hal, lou, wes, ola, sid; bounced xan, pia.
          [LAUNCH]: { messages: 8, delivered: 5, bounced: 2, complained: 3 },
        });

        // Every message (provider, normalized recipient) with its status and tracking ID. The SendGrid
        // async bounce of late@example.org names no message, so it only suppresses.
        const messages = (await mailwarden.messages.list(PROJECT, { limit: 100 })).items;
        const label = new Map<string | null, string>([
          [SPRING, 'SPRING'],
          [DIGEST, 'DIGEST'],
          [LAUNCH, 'LAUNCH'],
          [null, 'none'],
        ]);
        expect(Object.fromEntries(messages.map((m) => [`${m.provider} ${m.recipient}`, `${m.status} ${label.get(m.trackingId)}`]))).toEqual(
          {
            'ses ana@example.org': 'delivered SPRING', // delivery, open, click
            'ses bo@example.org': 'delivered SPRING',
            'ses cy@example.net': 'bounced SPRING',
            'ses dee@example.net': 'bounced SPRING', // reported as Dee@Example.NET
            'ses ivy@example.org': 'soft_bounced SPRING',
            'ses gus@example.net': 'delivered DIGEST', // not-spam is not a complaint
            'ses gone@example.org': 'rejected DIGEST',
            'ses hal@example.org': 'complained LAUNCH',
            'sendgrid jane@example.com': 'delivered SPRING', // processed, delivered, open, click
            'sendgrid john@example.com': 'bounced SPRING',
            'sendgrid kim@example.com': 'rejected SPRING',
            'sendgrid lou@example.com': 'complained LAUNCH',
            'mailgun mia@example.com': 'delivered SPRING',
            'mailgun ned@example.com': 'bounced SPRING',
            'mailgun kim@example.com': 'rejected SPRING',
            'postmark pat@example.com': 'delivered DIGEST',
            'postmark quinn@example.com': 'bounced DIGEST',
            'postmark sam@example.com': 'soft_bounced DIGEST',
            'postmark rae@example.com': 'complained SPRING',
            'sparkpost tia@example.net': 'delivered DIGEST',
            'sparkpost uma@example.net': 'bounced DIGEST',
            'sparkpost vic@example.net': 'complained DIGEST',
            'sparkpost wes@example.net': 'delivered LAUNCH',
            'sparkpost xan@example.net': 'soft_bounced LAUNCH',
            'mandrill yan@example.net': 'delivered DIGEST',
            'mandrill zoe@example.net': 'bounced DIGEST',
            'mandrill abe@example.net': 'delivered none', // send, open, click
            'mandrill bea@example.net': 'complained none',
            'mailjet ola@example.net': 'complained LAUNCH', // sent, open, spam
            'mailjet pia@example.net': 'bounced LAUNCH',
            'mailjet ren@example.net': 'rejected LAUNCH',
            'mailjet sid@example.net': 'delivered LAUNCH', // greylisted, then sent
            'postal ula@example.org': 'delivered DIGEST', // sent, loaded
            'postal val@example.org': 'bounced DIGEST',
            'postal wyn@example.org': 'soft_bounced DIGEST', // HardFail after the maximum attempts
          },
        );
        expect(messages).toHaveLength(35);
        expect(
          messages
            .filter((m) => m.trackingId === null)
            .map((m) => m.recipient)
            .sort(),
        ).toEqual(['abe@example.net', 'bea@example.net']);

        // Hard bounces and complaints, and provider drops for their own bounce or complaint lists; not soft
        // bounces (ivy, sam, xan), not SES's not-spam (gus), not delays (mia, lou, vic).
        const suppressions = (await mailwarden.suppressions.list(PROJECT, { limit: 100 })).items;
        const expected: Record<string, SuppressionReason> = {
          'cy@example.net': 'hard_bounce', // SES, multi-recipient bounce
          'dee@example.net': 'hard_bounce', // SES, same notification
          'gone@example.org': 'hard_bounce', // SES OnAccountSuppressionList
          'hal@example.org': 'complaint', // SES abuse complaint
          'john@example.com': 'hard_bounce', // SendGrid bounce
          // SendGrid dropped her as a "Bounced Address" (hard_bounce) and Mailgun as suppress-complaint
          // (complaint): the stronger reason wins, in either order.
          'kim@example.com': 'complaint',
          'lou@example.com': 'complaint', // SendGrid spamreport
          'late@example.org': 'hard_bounce', // SendGrid async bounce, no message id
          'ned@example.com': 'hard_bounce', // Mailgun permanent failure
          'quinn@example.com': 'hard_bounce', // Postmark HardBounce
          'rae@example.com': 'complaint', // Postmark SpamComplaint
          'uma@example.net': 'hard_bounce', // SparkPost bounce class 10
          'vic@example.net': 'complaint', // SparkPost spam_complaint
          'zoe@example.net': 'hard_bounce', // Mandrill hard_bounce
          'bea@example.net': 'complaint', // Mandrill spam, message without tracking ID
          'pia@example.net': 'hard_bounce', // Mailjet hard bounce
          'ren@example.net': 'hard_bounce', // Mailjet preblocked: its own list of bounced addresses
          'ola@example.net': 'complaint', // Mailjet spam
          'val@example.org': 'hard_bounce', // Postal HardFail with a 5xx
        };
        expect(Object.fromEntries(suppressions.map((s) => [s.email, s.reason]))).toEqual(expected);
        expect(await mailwarden.suppressions.check(PROJECT, 'Dee@Example.NET')).toMatchObject({ suppressed: true, reason: 'hard_bounce' });
        expect(await mailwarden.suppressions.check(PROJECT, 'gus@example.net')).toEqual({ email: 'gus@example.net', suppressed: false });
      }),
      { numRuns: 30 },
    );
  });
});
