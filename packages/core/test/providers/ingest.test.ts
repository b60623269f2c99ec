import { createHmac, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import {
  MailwardenError,
  attachMailgunTrackingId,
  attachBrevoTrackingId,
  attachMailerSendTrackingId,
  attachMailjetTrackingId,
  attachMandrillTrackingId,
  attachPostalTrackingId,
  attachPostmarkTrackingId,
  attachResendTrackingId,
  attachSendGridTrackingId,
  attachSesHeaderTrackingId,
  attachSesTagsTrackingId,
  attachSparkPostTrackingId,
  createMailwarden,
  createMemoryStore,
  webhookRoutes,
  type Mailwarden,
  type ProviderAuth,
  type Store,
  type SuppressionReason,
  type WebhookEnvironment,
  type WebhookOptions,
  type WebhookRequest,
  type WebhookRoute,
} from '@mailwarden/core';
import { expectMailwardenError } from '../expect-mailwarden-error.js';
import { mailgunJsonWebhook } from '../../src/testing/mailgun.js';
import { mailgunApiUserVariables } from './mailgun.simulator.js';
import { deliverBrevoEmail } from './brevo.simulator.js';
import { deliverMailerSendEmail } from './mailersend.simulator.js';
import { deliverMailjetMessages } from './mailjet.simulator.js';
import { deliverMandrillMessage } from './mandrill.simulator.js';
import { deliverPostalMessage } from './postal.simulator.js';
import { deliverPostmarkMessages } from './postmark.simulator.js';
import { deliverResendEmails } from './resend.simulator.js';
import { signPostalBody } from '../../src/testing/postal.js';
import { mailerSendRequest } from '../../src/testing/mailersend.js';
import { resendRequest } from '../../src/testing/resend.js';
import { signSendGridBody } from '../../src/testing/sendgrid.js';
import { deliverSendGridMail } from './sendgrid.simulator.js';
import { sesNotification, snsEnvelope, snsRequest, snsSigningCertificate, topicArn } from '../../src/testing/ses.js';
import { sesEventBridgeEvent } from '../../src/testing/ses-eventbridge.js';
import { sesV2SendEmail } from './ses.simulator.js';
import { deliverSparkPostTransmission } from './sparkpost.simulator.js';

// `mailwarden.ingestWebhook` end to end on the memory store: real provider requests (built by the
// simulators from send requests that went through the real attach helpers, and signed), per project.

const now = Date.parse('2026-04-01T09:00:05Z');
const nowSeconds = Math.floor(now / 1000);
const trackingId = 'Frühling 🌷 2026';

type ProjectName = 'acme' | 'globex';

/** One project's provider secrets, generated per run. */
interface ProjectSecrets {
  topicArn: string;
  sendgridKey: KeyObject;
  sendgridPublicKey: string;
  mailgunSigningKey: string;
  sparkpost: { username: string; password: string };
  postmark: { username: string; password: string };
  mandrillKey: string;
  mandrillUrl: string;
  /** Resend's signing secret (`whsec_…`). */
  resendSecret: string;
  brevo: { username: string; password: string };
  mailjet: { username: string; password: string };
  /** MailerSend's webhook signing secret. */
  mailersendSecret: string;
  /** The Postal server's signing key, and its public half the project is configured with. */
  postalKey: KeyObject;
  postalPublicKey: string;
  /** The secret header of the EventBridge connection that posts SES events. */
  eventBridgeKey: string;
}

function projectSecrets(project: ProjectName, snsTopicArn: string): ProjectSecrets {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const postal = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    topicArn: snsTopicArn,
    sendgridKey: privateKey,
    sendgridPublicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    mailgunSigningKey: randomBytes(16).toString('hex'),
    sparkpost: { username: 'sparkpost', password: randomBytes(12).toString('base64url') },
    postmark: { username: 'postmark', password: randomBytes(12).toString('base64url') },
    mandrillKey: randomBytes(16).toString('base64url'),
    mandrillUrl: `https://mail.example.com/projects/${project}/webhooks/mandrill`,
    resendSecret: `whsec_${randomBytes(24).toString('base64')}`,
    brevo: { username: 'brevo', password: randomBytes(12).toString('base64url') },
    mailjet: { username: 'mailjet', password: randomBytes(12).toString('base64url') },
    mailersendSecret: randomBytes(16).toString('hex'),
    postalKey: postal.privateKey,
    postalPublicKey: postal.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    eventBridgeKey: randomBytes(16).toString('base64url'),
  };
}

const secrets: Record<ProjectName, ProjectSecrets> = {
  acme: projectSecrets('acme', topicArn),
  globex: projectSecrets('globex', 'arn:aws:sns:us-east-1:210987654321:ses-events'),
};

function providerAuth(project: ProjectName): ProviderAuth {
  const s = secrets[project];
  return {
    ses: { topicArns: [s.topicArn] },
    sendgrid: { publicKey: s.sendgridPublicKey },
    mailgun: { signingKey: s.mailgunSigningKey },
    sparkpost: { basic: [s.sparkpost] },
    postmark: { basic: [s.postmark] },
    mandrill: { webhookKey: s.mandrillKey, url: s.mandrillUrl },
    resend: { signingSecret: s.resendSecret },
    brevo: { basic: [s.brevo] },
    mailjet: { basic: [s.mailjet] },
    mailersend: { signingSecret: s.mailersendSecret },
    postal: { publicKey: s.postalPublicKey },
    'ses-eventbridge': { headers: [{ name: 'X-Webhook-Secret', value: s.eventBridgeKey }] },
  };
}

const bothProjects = { acme: providerAuth('acme'), globex: providerAuth('globex') };

function environment(overrides: Partial<WebhookEnvironment> = {}) {
  const fetchCertificate = vi.fn(async (_url: string) => snsSigningCertificate);
  const confirmSubscription = vi.fn(async (_url: string) => {});
  return { now: () => now, fetchCertificate, confirmSubscription, ...overrides };
}

function mailwardenWith(
  options: { auth?: WebhookOptions['auth']; store?: Store; environment?: Partial<WebhookEnvironment> } = {},
): Mailwarden {
  return createMailwarden({
    ...(options.store === undefined ? {} : { store: options.store }),
    webhooks: { auth: options.auth ?? bothProjects, environment: options.environment ?? environment() },
  });
}

const basicHeader = ({ username, password }: { username: string; password: string }) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

function sendgridRequest(rawBody: Uint8Array, project: ProjectName): WebhookRequest {
  const timestamp = String(nowSeconds);
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-twilio-email-event-webhook-signature': signSendGridBody(secrets[project].sendgridKey, timestamp, rawBody),
      'x-twilio-email-event-webhook-timestamp': timestamp,
    },
    rawBody,
  };
}

function mailgunSignature(project: ProjectName) {
  const timestamp = String(nowSeconds);
  const token = randomBytes(25).toString('hex');
  return {
    timestamp,
    token,
    signature: createHmac('sha256', secrets[project].mailgunSigningKey)
      .update(timestamp + token)
      .digest('hex'),
  };
}

function jsonRequest(text: string, headers: Record<string, string> = {}): WebhookRequest {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, rawBody: new TextEncoder().encode(text) };
}

/** A form Mandrill signs: URL, then each field sorted by name as name + value, HMAC-SHA1, base64. */
function mandrillForm(fields: Record<string, string>, project: ProjectName): WebhookRequest {
  const { mandrillKey, mandrillUrl } = secrets[project];
  const text =
    mandrillUrl +
    Object.keys(fields)
      .sort()
      .map((name) => name + fields[name])
      .join('');
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-mandrill-signature': createHmac('sha1', mandrillKey).update(text).digest('base64'),
    },
    rawBody: new TextEncoder().encode(new URLSearchParams(fields).toString()),
  };
}

interface ProviderCase {
  /** The webhook route the request is posted to. */
  provider: WebhookRoute;
  /** A request the provider posts for `project`, about a message sent with the tracking ID attached. */
  request(project?: ProjectName): WebhookRequest;
  /** Authenticated for `project`, but a body that can never be parsed. */
  unparseable(project?: ProjectName): WebhookRequest;
  /** `recipient status` of every message the request stores, sorted; all carry `trackingId`. */
  messages: string[];
  counters: { messages: number; delivered: number; bounced: number; complained: number };
  /** Exactly the suppressions the request creates (normalized address -> reason). */
  suppressions: Record<string, SuppressionReason>;
  /** Addresses as the sender wrote them, for `suppressions.check`. */
  recipients: string[];
}

const cases: ProviderCase[] = [
  {
    provider: 'ses',
    request: (project = 'acme') => {
      const send = attachSesTagsTrackingId(
        {
          FromEmailAddress: 'shop@example.com',
          Destination: { ToAddresses: ['ana@example.org', 'Bo@Example.org'] },
          Content: { Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } } },
          ConfigurationSetName: 'tracking',
        },
        trackingId,
        { api: 'v2' },
      );
      const notification = sesNotification(sesV2SendEmail(send), 'Bounce');
      return snsRequest(snsEnvelope(JSON.stringify(notification), { topicArn: secrets[project].topicArn }));
    },
    unparseable: (project = 'acme') => snsRequest(snsEnvelope('this Message is not JSON', { topicArn: secrets[project].topicArn })),
    messages: ['ana@example.org bounced', 'bo@example.org bounced'],
    counters: { messages: 2, delivered: 0, bounced: 2, complained: 0 },
    suppressions: { 'ana@example.org': 'hard_bounce', 'bo@example.org': 'hard_bounce' },
    recipients: ['ana@example.org', 'Bo@Example.org'],
  },
  {
    provider: 'sendgrid',
    request: (project = 'acme') => {
      const send = attachSendGridTrackingId(
        {
          from: { email: 'news@example.com' },
          subject: 'Hello',
          content: [{ type: 'text/plain', value: 'Hi' }],
          personalizations: [{ to: [{ email: 'jane@example.com' }] }, { to: [{ email: 'john@example.com' }] }],
        },
        trackingId,
      );
      return sendgridRequest(deliverSendGridMail(send, 'spamreport', nowSeconds - 60), project);
    },
    unparseable: (project = 'acme') => sendgridRequest(new TextEncoder().encode('{"event":"delivered"}'), project),
    messages: ['jane@example.com complained', 'john@example.com complained'],
    counters: { messages: 2, delivered: 0, bounced: 0, complained: 2 },
    suppressions: { 'jane@example.com': 'complaint', 'john@example.com': 'complaint' },
    recipients: ['jane@example.com', 'john@example.com'],
  },
  {
    provider: 'mailgun',
    request: (project = 'acme') => {
      const send = attachMailgunTrackingId(
        { from: 'news@mg.example.com', to: 'mia@example.com', subject: 'Hello', text: 'Hi' },
        trackingId,
      );
      const body = mailgunJsonWebhook(mailgunApiUserVariables(send), {
        event: 'delivered',
        recipient: 'mia@example.com',
        timestamp: nowSeconds - 60,
        signingKey: secrets[project].mailgunSigningKey,
      });
      return { method: 'POST', headers: { 'content-type': 'application/json' }, rawBody: body };
    },
    unparseable: (project = 'acme') => jsonRequest(JSON.stringify({ signature: mailgunSignature(project), 'event-data': 'delivered' })),
    messages: ['mia@example.com delivered'],
    counters: { messages: 1, delivered: 1, bounced: 0, complained: 0 },
    suppressions: {},
    recipients: ['mia@example.com'],
  },
  {
    provider: 'sparkpost',
    request: (project = 'acme') => {
      const send = attachSparkPostTrackingId(
        {
          recipients: [{ address: 'tia@example.net' }, { address: { email: 'Uma@Example.net', name: 'Uma' } }],
          content: { from: 'news@example.com', subject: 'Hello', text: 'Hi' },
        },
        trackingId,
      );
      return deliverSparkPostTransmission(send, secrets[project].sparkpost).request;
    },
    unparseable: (project = 'acme') => jsonRequest('"delivery"', { authorization: basicHeader(secrets[project].sparkpost) }),
    messages: ['tia@example.net delivered', 'uma@example.net delivered'],
    counters: { messages: 2, delivered: 2, bounced: 0, complained: 0 },
    suppressions: {},
    recipients: ['tia@example.net', 'Uma@Example.net'],
  },
  {
    provider: 'postmark',
    request: (project = 'acme') => {
      const send = attachPostmarkTrackingId(
        { From: 'news@example.com', To: 'quinn@example.com', Subject: 'Hello', TextBody: 'Hi' },
        trackingId,
      );
      return deliverPostmarkMessages(send, { record: 'Bounce', escapeNonAscii: true, credentials: secrets[project].postmark })[0]!.request;
    },
    unparseable: (project = 'acme') =>
      jsonRequest('[{"RecordType":"Delivery","Recipient":"quinn@example.com"}]', { authorization: basicHeader(secrets[project].postmark) }),
    messages: ['quinn@example.com bounced'],
    counters: { messages: 1, delivered: 0, bounced: 1, complained: 0 },
    suppressions: { 'quinn@example.com': 'hard_bounce' },
    recipients: ['quinn@example.com'],
  },
  {
    provider: 'mandrill',
    request: (project = 'acme') => {
      const send = attachMandrillTrackingId(
        {
          message: {
            from_email: 'news@example.com',
            to: [{ email: 'yan@example.net' }, { email: 'zoe@example.net' }],
            subject: 'Hello',
            text: 'Hi',
          },
        },
        trackingId,
      );
      const { mandrillKey, mandrillUrl } = secrets[project];
      return deliverMandrillMessage(send, { webhookKey: mandrillKey, url: mandrillUrl, event: 'hard_bounce', escapeNonAscii: true })
        .request;
    },
    unparseable: (project = 'acme') => mandrillForm({ mandrill_events: '{"event":"send"}' }, project),
    messages: ['yan@example.net bounced', 'zoe@example.net bounced'],
    counters: { messages: 2, delivered: 0, bounced: 2, complained: 0 },
    suppressions: { 'yan@example.net': 'hard_bounce', 'zoe@example.net': 'hard_bounce' },
    recipients: ['yan@example.net', 'zoe@example.net'],
  },
  {
    provider: 'resend',
    // Resend posts one event per request and recipient, signed as Svix signs.
    request: (project = 'acme') => {
      const send = attachResendTrackingId({ from: 'news@example.com', to: 'Lea@Example.com', subject: 'Hello', text: 'Hi' }, trackingId);
      return deliverResendEmails(send, {
        type: 'email.bounced',
        tagsAs: 'object',
        signingSecret: secrets[project].resendSecret,
        signedAt: new Date(now),
      })[0]!.request;
    },
    unparseable: (project = 'acme') => resendRequest('"email.bounced"', [], secrets[project].resendSecret, new Date(now)),
    messages: ['lea@example.com bounced'],
    counters: { messages: 1, delivered: 0, bounced: 1, complained: 0 },
    suppressions: { 'lea@example.com': 'hard_bounce' },
    recipients: ['Lea@Example.com'],
  },
  {
    provider: 'brevo',
    // Brevo echoes X-Mailin-custom in each event; several recipients' events come as a batched array.
    request: (project = 'acme') => {
      const send = attachBrevoTrackingId(
        {
          sender: { email: 'news@example.com' },
          to: [{ email: 'eli@example.org' }, { email: 'Fay@Example.org' }],
          subject: 'Hello',
          textContent: 'Hi',
        },
        trackingId,
      );
      return deliverBrevoEmail(JSON.stringify(send), secrets[project].brevo, false, 'hard_bounce').request;
    },
    unparseable: (project = 'acme') => jsonRequest('"hard_bounce"', { authorization: basicHeader(secrets[project].brevo) }),
    messages: ['eli@example.org bounced', 'fay@example.org bounced'],
    counters: { messages: 2, delivered: 0, bounced: 2, complained: 0 },
    suppressions: { 'eli@example.org': 'hard_bounce', 'fay@example.org': 'hard_bounce' },
    recipients: ['eli@example.org', 'Fay@Example.org'],
  },
  {
    provider: 'mailjet',
    request: (project = 'acme') => {
      const send = attachMailjetTrackingId(
        {
          Messages: ['ivy@example.org', 'Jo@Example.org'].map((Email) => ({
            From: { Email: 'news@example.com' },
            To: [{ Email }],
            Subject: 'Hello',
            TextPart: 'Hi',
          })),
        },
        trackingId,
      );
      return deliverMailjetMessages(send, {
        event: 'bounce',
        grouped: true,
        escapeNonAscii: true,
        credentials: secrets[project].mailjet,
      })[0]!.request;
    },
    unparseable: (project = 'acme') => jsonRequest('"bounce"', { authorization: basicHeader(secrets[project].mailjet) }),
    messages: ['ivy@example.org bounced', 'jo@example.org bounced'],
    counters: { messages: 2, delivered: 0, bounced: 2, complained: 0 },
    suppressions: { 'ivy@example.org': 'hard_bounce', 'jo@example.org': 'hard_bounce' },
    recipients: ['ivy@example.org', 'Jo@Example.org'],
  },
  {
    provider: 'mailersend',
    // MailerSend posts one activity per recipient and request, signed over its raw bytes.
    request: (project = 'acme') => {
      const send = attachMailerSendTrackingId(
        { from: { email: 'news@example.com' }, to: [{ email: 'Kai@Example.com' }], subject: 'Hello', text: 'Hi' },
        trackingId,
      );
      return deliverMailerSendEmail(send, secrets[project].mailersendSecret, 'hard_bounced').requests[0]!;
    },
    unparseable: (project = 'acme') => mailerSendRequest('"activity.hard_bounced"', [], secrets[project].mailersendSecret),
    messages: ['kai@example.com bounced'],
    counters: { messages: 1, delivered: 0, bounced: 1, complained: 0 },
    suppressions: { 'kai@example.com': 'hard_bounce' },
    recipients: ['Kai@Example.com'],
  },
  {
    provider: 'postal',
    // Postal posts one event per recipient and request, signed with the server's RSA key.
    request: (project = 'acme') => {
      const send = attachPostalTrackingId({ to: ['Nia@Example.com'], from: 'news@example.com', subject: 'Hello' }, trackingId);
      return deliverPostalMessage(send, {
        event: 'MessageDeliveryFailed',
        privateKey: secrets[project].postalKey,
        legacy: false,
        escapeNonAscii: false,
      })[0]!.request;
    },
    unparseable: (project = 'acme') => {
      const rawBody = new TextEncoder().encode('"MessageDeliveryFailed"');
      return { method: 'POST', headers: signPostalBody(secrets[project].postalKey, rawBody), rawBody };
    },
    messages: ['nia@example.com bounced'],
    counters: { messages: 1, delivered: 0, bounced: 1, complained: 0 },
    suppressions: { 'nia@example.com': 'hard_bounce' },
    recipients: ['Nia@Example.com'],
  },
  {
    provider: 'ses-eventbridge',
    // SES's record, as event publishing to EventBridge carries it, posted by an API destination whose
    // connection sends a secret header; its events are SES's.
    request: (project = 'acme') => {
      const send = attachSesHeaderTrackingId(
        {
          FromEmailAddress: 'shop@example.com',
          Destination: { ToAddresses: ['cal@example.org', 'Dot@Example.org'] },
          Content: { Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } } },
          ConfigurationSetName: 'tracking',
        },
        trackingId,
      );
      const notification = sesNotification(sesV2SendEmail(send), 'Bounce', { includeHeaders: true });
      return jsonRequest(JSON.stringify(sesEventBridgeEvent(notification, new Date(now))), {
        'x-webhook-secret': secrets[project].eventBridgeKey,
      });
    },
    unparseable: (project = 'acme') => jsonRequest('this event is not JSON', { 'x-webhook-secret': secrets[project].eventBridgeKey }),
    messages: ['cal@example.org bounced', 'dot@example.org bounced'],
    counters: { messages: 2, delivered: 0, bounced: 2, complained: 0 },
    suppressions: { 'cal@example.org': 'hard_bounce', 'dot@example.org': 'hard_bounce' },
    recipients: ['cal@example.org', 'Dot@Example.org'],
  },
];

/** What a project holds, read through the public services only. */
async function projectState(mailwarden: Mailwarden, projectId: string) {
  const messages = (await mailwarden.messages.list(projectId, { limit: 100 })).items;
  const trackingIds = (await mailwarden.trackingIds.list(projectId, { limit: 100 })).items;
  const suppressions = (await mailwarden.suppressions.list(projectId, { limit: 100 })).items;
  return {
    messages: messages.map((message) => `${message.recipient} ${message.status}`).sort(),
    messageTrackingIds: [...new Set(messages.map((message) => message.trackingId))],
    trackingIds: trackingIds.map(({ trackingId, messages, delivered, bounced, complained }) => ({
      trackingId,
      messages,
      delivered,
      bounced,
      complained,
    })),
    suppressions: Object.fromEntries(suppressions.map((suppression) => [suppression.email, suppression.reason])),
  };
}

const emptyState = { messages: [], messageTrackingIds: [], trackingIds: [], suppressions: {} };

async function expectStored(mailwarden: Mailwarden, projectId: string, c: ProviderCase): Promise<void> {
  expect(await projectState(mailwarden, projectId)).toEqual({
    messages: c.messages,
    messageTrackingIds: [trackingId],
    trackingIds: [{ trackingId, ...c.counters }],
    suppressions: c.suppressions,
  });
  for (const recipient of c.recipients) {
    const check = await mailwarden.suppressions.check(projectId, recipient);
    const reason = c.suppressions[recipient.toLowerCase()];
    expect(check).toMatchObject(
      reason === undefined ? { email: recipient, suppressed: false } : { email: recipient, suppressed: true, reason },
    );
  }
}

/**
 * The memory store, but `applyEvents` fails `failures` times (as an unreachable Redis or Postgres would),
 * after applying the first `appliedBeforeFailure` events of the batch (a connection lost mid-batch).
 */
function flakyStore(failures: number, appliedBeforeFailure = 0): Store {
  const store = createMemoryStore();
  let left = failures;
  return {
    ...store,
    async applyEvents(projectId, events) {
      if (left === 0) return store.applyEvents(projectId, events);
      left--;
      if (appliedBeforeFailure > 0) await store.applyEvents(projectId, events.slice(0, appliedBeforeFailure));
      throw new MailwardenError('store_unavailable', 'The store did not answer.');
    },
  };
}

describe('ingestWebhook, per provider', () => {
  describe.each(cases)('$provider', (c) => {
    const events = c.messages.length;

    it('stores a valid request: messages, tracking-ID counters and suppressions', async () => {
      const mailwarden = mailwardenWith();
      expect(await mailwarden.ingestWebhook(c.provider, 'acme', c.request())).toEqual({
        accepted: events,
        duplicates: 0,
        skipped: 0,
        warnings: [],
      });
      await expectStored(mailwarden, 'acme', c);
      // Projects are isolated: the other one saw nothing.
      expect(await projectState(mailwarden, 'globex')).toEqual(emptyState);
    });

    it('counts the same request again as duplicates, changing nothing', async () => {
      const mailwarden = mailwardenWith();
      const request = c.request();
      await mailwarden.ingestWebhook(c.provider, 'acme', request);
      expect(await mailwarden.ingestWebhook(c.provider, 'acme', request)).toEqual({
        accepted: 0,
        duplicates: events,
        skipped: 0,
        warnings: [],
      });
      await expectStored(mailwarden, 'acme', c);
    });

    it('rejects while the store fails, storing nothing, and accepts the very same request on retry', async () => {
      const mailwarden = mailwardenWith({ store: flakyStore(1) });
      const request = c.request();
      await expectMailwardenError(() => mailwarden.ingestWebhook(c.provider, 'acme', request), 'store_unavailable');
      expect(await projectState(mailwarden, 'acme')).toEqual(emptyState);
      expect(await mailwarden.ingestWebhook(c.provider, 'acme', request)).toEqual({
        accepted: events,
        duplicates: 0,
        skipped: 0,
        warnings: [],
      });
      await expectStored(mailwarden, 'acme', c);
    });

    it('refuses a project without authentication for this provider, and an unknown project', async () => {
      const { [c.provider]: _omitted, ...others } = providerAuth('acme');
      const mailwarden = mailwardenWith({ auth: { acme: others } });
      await expectMailwardenError(() => mailwarden.ingestWebhook(c.provider, 'acme', c.request()), 'webhook_unauthorized');
      await expectMailwardenError(() => mailwarden.ingestWebhook(c.provider, 'initech', c.request()), 'webhook_unauthorized');
      expect(await projectState(mailwarden, 'acme')).toEqual(emptyState);
    });

    it.each([
      ['a map', bothProjects],
      [
        'an async resolver',
        async (projectId: string) => (Object.hasOwn(bothProjects, projectId) ? bothProjects[projectId as ProjectName] : undefined),
      ],
    ] as const)('resolves authentication per project (%s): a request authenticated for acme is refused by globex', async (_, auth) => {
      const mailwarden = mailwardenWith({ auth });
      const forAcme = c.request('acme');
      await expectMailwardenError(() => mailwarden.ingestWebhook(c.provider, 'globex', forAcme), 'webhook_unauthorized');
      expect(await projectState(mailwarden, 'globex')).toEqual(emptyState);
      // Each project accepts what is authenticated for it, into its own state only.
      expect((await mailwarden.ingestWebhook(c.provider, 'acme', forAcme)).accepted).toBe(events);
      expect((await mailwarden.ingestWebhook(c.provider, 'globex', c.request('globex'))).accepted).toBe(events);
      await expectStored(mailwarden, 'acme', c);
      await expectStored(mailwarden, 'globex', c);
    });

    it('refuses every request when createMailwarden has no webhooks option', async () => {
      const mailwarden = createMailwarden();
      await expectMailwardenError(() => mailwarden.ingestWebhook(c.provider, 'acme', c.request()), 'webhook_unauthorized');
      expect(await projectState(mailwarden, 'acme')).toEqual(emptyState);
    });

    it('answers invalid_payload for an authenticated body that can never parse, storing nothing', async () => {
      const mailwarden = mailwardenWith();
      await expectMailwardenError(() => mailwarden.ingestWebhook(c.provider, 'acme', c.unparseable()), 'invalid_payload');
      expect(await projectState(mailwarden, 'acme')).toEqual(emptyState);
    });
  });
});

describe('ingestWebhook, across providers', () => {
  it('answers not_found for a provider name it does not know, Object.prototype names included', async () => {
    const mailwarden = mailwardenWith();
    const request = cases[0]!.request();
    for (const name of ['smtp2go', 'SES', '', 'constructor', '__proto__', 'toString']) {
      await expectMailwardenError(() => mailwarden.ingestWebhook(name as WebhookRoute, 'acme', request), 'not_found');
    }
    expect(webhookRoutes).toEqual(cases.map((c) => c.provider));
  });

  it('applies the rest of a partly stored batch on retry, counting nothing twice', async () => {
    // The store lost its connection after the first of two events: the retry finds one duplicate.
    const ses = cases.find((c) => c.provider === 'ses')!;
    const mailwarden = mailwardenWith({ store: flakyStore(1, 1) });
    const request = ses.request();
    await expectMailwardenError(() => mailwarden.ingestWebhook('ses', 'acme', request), 'store_unavailable');
    expect(await mailwarden.ingestWebhook('ses', 'acme', request)).toEqual({ accepted: 1, duplicates: 1, skipped: 0, warnings: [] });
    await expectStored(mailwarden, 'acme', ses);
  });

  it('rejects with a non-mailwarden store error as it is, for the HTTP layer to map', async () => {
    const store = createMemoryStore();
    const broken = new Error('ECONNRESET');
    const mailwarden = mailwardenWith({ store: { ...store, applyEvents: async () => Promise.reject(broken) } });
    await expect(mailwarden.ingestWebhook('sendgrid', 'acme', cases[1]!.request())).rejects.toBe(broken);
    expect(await projectState(mailwarden, 'acme')).toEqual(emptyState);
  });
});

describe('ingestWebhook, batches with one malformed item', () => {
  it('SendGrid: skips the item without a timestamp and applies the others', async () => {
    const mailwarden = mailwardenWith();
    const item = (email: string, extra: Record<string, unknown> = {}) => ({
      email,
      timestamp: nowSeconds - 60,
      event: 'delivered',
      sg_event_id: randomBytes(8).toString('hex'),
      sg_message_id: 'msg1.filterdrecv-1.0',
      service_id: trackingId,
      ...extra,
    });
    const batch = [item('jane@example.com'), item('john@example.com', { timestamp: 'yesterday' }), item('kim@example.com')];
    const body = new TextEncoder().encode(`[${batch.map((event) => JSON.stringify(event)).join(',\r\n')}]\r\n`);
    const result = await mailwarden.ingestWebhook('sendgrid', 'acme', sendgridRequest(body, 'acme'));
    expect(result).toMatchObject({ accepted: 2, duplicates: 0, skipped: 1, warnings: [{ index: 1, code: 'invalid_event' }] });
    expect(result.warnings).toHaveLength(1);
    expect((await projectState(mailwarden, 'acme')).messages).toEqual(['jane@example.com delivered', 'kim@example.com delivered']);
  });

  it('SparkPost: skips the item without rcpt_to and applies the others', async () => {
    const mailwarden = mailwardenWith();
    const delivery = deliverSparkPostTransmission(
      attachSparkPostTrackingId(
        { recipients: [{ address: 'tia@example.net' }, { address: 'uma@example.net' }, { address: 'vic@example.net' }] },
        trackingId,
      ),
      secrets.acme.sparkpost,
    ).request;
    const batch = JSON.parse(new TextDecoder().decode(delivery.rawBody)) as { msys: { message_event: Record<string, unknown> } }[];
    delete batch[1]!.msys.message_event['rcpt_to'];
    delete batch[1]!.msys.message_event['raw_rcpt_to'];
    const result = await mailwarden.ingestWebhook('sparkpost', 'acme', {
      ...delivery,
      rawBody: new TextEncoder().encode(JSON.stringify(batch)),
    });
    expect(result).toMatchObject({ accepted: 2, duplicates: 0, skipped: 1, warnings: [{ index: 1, code: 'invalid_event' }] });
    expect(result.warnings).toHaveLength(1);
    expect((await projectState(mailwarden, 'acme')).messages).toEqual(['tia@example.net delivered', 'vic@example.net delivered']);
  });

  it('Mandrill: names the provider item of an unusable address, not the event index (a sync event before it makes no event)', async () => {
    const mailwarden = mailwardenWith();
    const { request } = deliverMandrillMessage(
      attachMandrillTrackingId(
        { message: { to: [{ email: 'yan@example.net' }, { email: 'no-at-sign.example.net' }, { email: 'zoe@example.net' }] } },
        trackingId,
      ),
      { webhookKey: secrets.acme.mandrillKey, url: secrets.acme.mandrillUrl, event: 'delivered', escapeNonAscii: false },
    );
    const events = JSON.parse(new URLSearchParams(new TextDecoder().decode(request.rawBody)).get('mandrill_events')!) as unknown[];
    // A rejection-list sync event is not about a sent message: ignored without a warning.
    const sync = { type: 'blacklist', action: 'add', reject: { email: 'old@example.net', reason: 'hard-bounce' }, ts: 1_760_000_000 };
    const result = await mailwarden.ingestWebhook(
      'mandrill',
      'acme',
      mandrillForm({ mandrill_events: JSON.stringify([sync, ...events]) }, 'acme'),
    );
    // Items: 0 sync, 1 yan, 2 the bad address, 3 zoe. Events: yan, bad, zoe — the bad one is event 1.
    expect(result).toMatchObject({ accepted: 2, duplicates: 0, skipped: 1, warnings: [{ index: 2, code: 'invalid_recipient' }] });
    expect(result.warnings).toHaveLength(1);
    expect((await projectState(mailwarden, 'acme')).messages).toEqual(['yan@example.net delivered', 'zoe@example.net delivered']);
  });

  it('SES: names the notification (item 0) for an unusable recipient of a multi-recipient bounce', async () => {
    const mailwarden = mailwardenWith();
    const sent = sesV2SendEmail(
      attachSesTagsTrackingId(
        { Destination: { ToAddresses: ['ana@example.org', 'no-at-sign.example.org', 'cy@example.net'] }, Content: { Simple: {} } },
        trackingId,
        { api: 'v2' },
      ),
    );
    const result = await mailwarden.ingestWebhook('ses', 'acme', snsRequest(snsEnvelope(JSON.stringify(sesNotification(sent, 'Bounce')))));
    // One provider item (the notification) became three events; the second is the bad one.
    expect(result).toMatchObject({ accepted: 2, duplicates: 0, skipped: 1, warnings: [{ index: 0, code: 'invalid_recipient' }] });
    expect(result.warnings).toHaveLength(1);
    expect(await projectState(mailwarden, 'acme')).toMatchObject({
      messages: ['ana@example.org bounced', 'cy@example.net bounced'],
      suppressions: { 'ana@example.org': 'hard_bounce', 'cy@example.net': 'hard_bounce' },
    });
  });
});

describe('ingestWebhook, SNS handshake and verification', () => {
  it('confirms an SNS subscription once, through the SubscribeURL, and stores nothing', async () => {
    const env = environment();
    const mailwarden = mailwardenWith({ environment: env });
    const envelope = snsEnvelope('You have chosen to subscribe to the topic.', { type: 'SubscriptionConfirmation' });
    expect(await mailwarden.ingestWebhook('ses', 'acme', snsRequest(envelope))).toEqual({
      accepted: 0,
      duplicates: 0,
      skipped: 0,
      warnings: [],
      notice: 'subscription_confirmed',
    });
    expect(env.confirmSubscription).toHaveBeenCalledExactlyOnceWith(envelope.SubscribeURL);
    expect(await projectState(mailwarden, 'acme')).toEqual(emptyState);
  });

  it('answers verification_unavailable when the subscription cannot be confirmed (SNS retries a 503)', async () => {
    const failure = new Error('connect ETIMEDOUT');
    const mailwarden = mailwardenWith({ environment: environment({ confirmSubscription: async () => Promise.reject(failure) }) });
    const envelope = snsEnvelope('You have chosen to subscribe to the topic.', { type: 'SubscriptionConfirmation' });
    const error = await expectMailwardenError(
      () => mailwarden.ingestWebhook('ses', 'acme', snsRequest(envelope)),
      'verification_unavailable',
    );
    expect(error.cause).toBe(failure);
  });

  it('answers verification_unavailable when the signing certificate cannot be fetched, and accepts once it can', async () => {
    let reachable = false;
    const fetchCertificate = vi.fn(async (_url: string) => {
      if (!reachable) throw new Error('getaddrinfo ENOTFOUND sns.us-east-1.amazonaws.com');
      return snsSigningCertificate;
    });
    const mailwarden = mailwardenWith({ environment: environment({ fetchCertificate }) });
    const ses = cases[0]!;
    const request = ses.request();
    await expectMailwardenError(() => mailwarden.ingestWebhook('ses', 'acme', request), 'verification_unavailable');
    expect(await projectState(mailwarden, 'acme')).toEqual(emptyState);
    reachable = true;
    expect((await mailwarden.ingestWebhook('ses', 'acme', request)).accepted).toBe(2);
    await expectStored(mailwarden, 'acme', ses);
  });
});
