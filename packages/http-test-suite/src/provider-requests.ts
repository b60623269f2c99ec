import type { ProviderAuth, SuppressionReason, WebhookEnvironment, WebhookRequest, WebhookRoute } from '@mailwarden/core';
// The testing kit users test with: each provider's real payload, signed or authenticated as the
// provider does, so requests built here are the ones a real provider would post.
import {
  brevoWebhook,
  createPostalKeyPair,
  createSendGridKeyPair,
  fetchTestSnsCertificate,
  mailgunWebhook,
  mailjetWebhook,
  mailerSendWebhook,
  mandrillWebhook,
  postalWebhook,
  postmarkWebhook,
  resendWebhook,
  sesEventBridgeWebhook,
  sendGridWebhook,
  sesWebhook,
  snsSubscriptionConfirmation,
  sparkPostWebhook,
  type TestEventType,
} from '@mailwarden/core/testing';
import { randomBytes } from 'node:crypto';

/** The receivers' clock: the providers date their events and signatures just before it. */
export const WEBHOOK_NOW = Date.parse('2026-04-01T09:00:05Z');
const signedAt = new Date(WEBHOOK_NOW);
/** Seconds before the receivers' clock, when the events happened. */
const secondsAgo = (seconds: number) => new Date(WEBHOOK_NOW - seconds * 1000);

/** A tracking ID beyond ASCII, as senders may set it. */
export const TRACKING_ID = 'Frühling 🌷 2026';

interface Credentials {
  username: string;
  password: string;
}

/** One project's provider secrets: what the project configures and what its providers sign with. */
export interface ProviderSecrets {
  projectId: string;
  topicArn: string;
  /** SendGrid's private key (PEM), which signs; the project is configured with its public half. */
  sendgridKey: string;
  sendgridPublicKey: string;
  mailgunSigningKey: string;
  sparkpost: Credentials;
  postmark: Credentials;
  mandrillKey: string;
  mandrillUrl: string;
  /** Resend's signing secret (`whsec_…`). */
  resendSecret: string;
  brevo: Credentials;
  mailjet: Credentials;
  /** MailerSend's webhook signing secret. */
  mailersendSecret: string;
  /** The Postal server's signing key (PEM), which signs; the project is configured with its public half. */
  postalKey: string;
  postalPublicKey: string;
  /** The secret header of the EventBridge connection (an API-key connection) posting SES events. */
  eventBridgeKey: string;
}

/**
 * RSA key pairs take tens of milliseconds to make: a few, made once, serve every project in turn, so two
 * projects of one app still hold different keys.
 */
const postalKeyPairs: { publicKey: string; privateKey: string }[] = [];
let postalKeyTurn = 0;
function nextPostalKeyPair(): { publicKey: string; privateKey: string } {
  const index = postalKeyTurn++ % 3;
  postalKeyPairs[index] ??= createPostalKeyPair();
  return postalKeyPairs[index];
}
/** A Postal key no project is configured with, for forged requests. */
let strangerPostalKey: string | undefined;

export function createProviderSecrets(projectId: string): ProviderSecrets {
  const sendgrid = createSendGridKeyPair();
  const postal = nextPostalKeyPair();
  return {
    projectId,
    topicArn: `arn:aws:sns:us-east-1:123456789012:ses-events-${projectId}`,
    sendgridKey: sendgrid.privateKey,
    sendgridPublicKey: sendgrid.publicKey,
    mailgunSigningKey: randomBytes(16).toString('hex'),
    sparkpost: { username: 'sparkpost', password: randomBytes(12).toString('base64url') },
    postmark: { username: 'postmark', password: randomBytes(12).toString('base64url') },
    mandrillKey: randomBytes(16).toString('base64url'),
    mandrillUrl: `https://hooks.example.com/mw/projects/${projectId}/webhooks/mandrill`,
    resendSecret: `whsec_${randomBytes(24).toString('base64')}`,
    brevo: { username: 'brevo', password: randomBytes(12).toString('base64url') },
    mailjet: { username: 'mailjet', password: randomBytes(12).toString('base64url') },
    mailersendSecret: randomBytes(16).toString('base64url'),
    postalKey: postal.privateKey,
    postalPublicKey: postal.publicKey,
    eventBridgeKey: randomBytes(16).toString('base64url'),
  };
}

/** The webhook authentication a project configures for all six providers. */
export function providerAuthOf(secrets: ProviderSecrets): ProviderAuth {
  return {
    ses: { topicArns: [secrets.topicArn] },
    // Group 42 stands for a stream: unsubscribe-events.ts posts its unsubscribes.
    sendgrid: { publicKey: secrets.sendgridPublicKey, unsubscribeGroups: { '42': 'product-updates' } },
    mailgun: { signingKey: secrets.mailgunSigningKey },
    sparkpost: { basic: [secrets.sparkpost] },
    postmark: { basic: [secrets.postmark] },
    mandrill: { webhookKey: secrets.mandrillKey, url: secrets.mandrillUrl },
    resend: { signingSecret: secrets.resendSecret },
    brevo: { basic: [secrets.brevo] },
    mailjet: { basic: [secrets.mailjet] },
    mailersend: { signingSecret: secrets.mailersendSecret },
    postal: { publicKey: secrets.postalPublicKey },
    'ses-eventbridge': { headers: [{ name: 'X-Webhook-Secret', value: secrets.eventBridgeKey }] },
  };
}

/** The receivers' environment: a fixed clock, the kit's SNS certificate, and SNS confirmations recorded, not fetched. */
export interface TestWebhookEnvironment extends WebhookEnvironment {
  confirmedSubscriptions: string[];
}

export function createWebhookEnvironment(): TestWebhookEnvironment {
  const confirmedSubscriptions: string[] = [];
  return {
    now: () => WEBHOOK_NOW,
    fetchCertificate: fetchTestSnsCertificate,
    confirmSubscription: async (url) => void confirmedSubscriptions.push(url),
    confirmedSubscriptions,
  };
}

const encoder = new TextEncoder();
const wrong = (credentials: Credentials): Credentials => ({ ...credentials, password: `${credentials.password}-wrong` });

// --- One builder per provider: a signed request about one message, as the provider posts it. ----

/** A hard bounce of one message to `recipients`: one SES notification naming them all. */
export function sesBounce(secrets: ProviderSecrets, recipients: string[], trackingId: string): WebhookRequest {
  const events = recipients.map((recipient) => ({ type: 'bounced' as const, recipient, trackingId, occurredAt: secondsAgo(3) }));
  return sesWebhook({ events, topicArn: secrets.topicArn, signedAt });
}

export function sesSubscriptionConfirmation(secrets: ProviderSecrets): WebhookRequest {
  return snsSubscriptionConfirmation({ topicArn: secrets.topicArn, signedAt });
}

/** SendGrid's event names, as the suite writes them. */
const sendGridTypes: Record<string, TestEventType> = { delivered: 'delivered', bounce: 'bounced', spamreport: 'complained' };

export function sendgridEvents(
  secrets: ProviderSecrets,
  recipients: string[],
  event: string,
  trackingId: string,
  key = secrets.sendgridKey,
): WebhookRequest {
  const type = sendGridTypes[event]!;
  return sendGridWebhook({
    events: recipients.map((recipient) => ({ type, recipient, trackingId, occurredAt: secondsAgo(60) })),
    privateKey: key,
    signedAt,
  });
}

/**
 * SendGrid soft bounces (`blocked`, `421 4.7.0`), each of its message, `secondsBefore` the receivers'
 * clock, in one signed POST: what the soft-bounce rule counts.
 */
export function sendgridSoftBounces(
  secrets: ProviderSecrets,
  bounces: readonly { recipient: string; messageId: string; secondsBefore: number }[],
): WebhookRequest {
  return sendGridWebhook({
    events: bounces.map(({ recipient, messageId, secondsBefore }) => ({
      type: 'bounced' as const,
      bounceClass: 'soft' as const,
      recipient,
      messageId,
      occurredAt: secondsAgo(secondsBefore),
    })),
    privateKey: secrets.sendgridKey,
    signedAt,
  });
}

export function mailgunDelivered(
  secrets: ProviderSecrets,
  recipient: string,
  trackingId: string,
  signingKey = secrets.mailgunSigningKey,
): WebhookRequest {
  return mailgunWebhook({ events: [{ type: 'delivered', recipient, trackingId, occurredAt: secondsAgo(30) }], signingKey, signedAt });
}

export function sparkpostDeliveries(
  secrets: ProviderSecrets,
  recipients: string[],
  trackingId: string,
  credentials = secrets.sparkpost,
): WebhookRequest {
  // One transmission to every recipient: one message id for all.
  const messageId = String(Date.parse('2026-04-01') + recipients.length);
  const events = recipients.map((recipient) => ({
    type: 'delivered' as const,
    recipient,
    trackingId,
    messageId,
    occurredAt: secondsAgo(60),
  }));
  return sparkPostWebhook({ events, auth: { basic: credentials }, signedAt });
}

/** Hard bounces of one Brevo message: one event alone, several as a batched webhook's array. */
export function brevoBounces(
  secrets: ProviderSecrets,
  recipients: string[],
  trackingId: string,
  credentials = secrets.brevo,
): WebhookRequest {
  const messageId = `${Date.parse('2026-04-01')}.${recipients.length}@smtp-relay.mailin.fr`;
  const events = recipients.map((recipient) => ({
    type: 'bounced' as const,
    recipient,
    trackingId,
    messageId,
    occurredAt: secondsAgo(45),
  }));
  return brevoWebhook({ events, auth: { basic: credentials }, signedAt });
}

/** A Postmark record; without a tracking ID when `trackingId` is `null`. */
export function postmarkRecord(
  secrets: ProviderSecrets,
  recipient: string,
  record: 'Delivery' | 'Bounce',
  trackingId: string | null,
  credentials = secrets.postmark,
): WebhookRequest {
  const type = record === 'Delivery' ? 'delivered' : 'bounced';
  return postmarkWebhook({
    events: [{ type, recipient, trackingId, occurredAt: new Date('2026-01-01T00:00:00.123Z') }],
    auth: { basic: credentials },
    signedAt,
  });
}

/** Mandrill's event names, as the suite writes them. */
const mandrillTypes: Record<string, TestEventType> = { delivered: 'delivered', hard_bounce: 'bounced' };

export function mandrillEvents(
  secrets: ProviderSecrets,
  recipients: string[],
  event: string,
  trackingId: string,
  webhookKey = secrets.mandrillKey,
): WebhookRequest {
  const type = mandrillTypes[event]!;
  const events = recipients.map((recipient) => ({ type, recipient, trackingId, occurredAt: secondsAgo(60) }));
  return mandrillWebhook({ events, webhookKey, url: secrets.mandrillUrl, signedAt });
}

/** A hard bounce of one message to `recipient`: Resend posts one event per request, signed as Svix signs. */
export function resendBounce(
  secrets: ProviderSecrets,
  recipient: string,
  trackingId: string,
  secret = secrets.resendSecret,
): WebhookRequest {
  const events = [{ type: 'bounced' as const, recipient, trackingId, occurredAt: secondsAgo(1) }];
  return resendWebhook({ events, signingSecret: secret, signedAt });
}

/** A hard bounce of one message to `recipients`: one SES event, posted by an EventBridge API destination. */
export function sesEventBridgeBounce(
  secrets: ProviderSecrets,
  recipients: string[],
  trackingId: string,
  key = secrets.eventBridgeKey,
): WebhookRequest {
  const events = recipients.map((recipient) => ({ type: 'bounced' as const, recipient, trackingId, occurredAt: secondsAgo(3) }));
  return sesEventBridgeWebhook({ events, auth: { headers: { 'X-Webhook-Secret': key } }, signedAt });
}

/** A hard bounce of one message to `recipient`: MailerSend posts one activity per recipient, signed over its raw bytes. */
export function mailersendBounce(
  secrets: ProviderSecrets,
  recipient: string,
  trackingId: string,
  secret = secrets.mailersendSecret,
): WebhookRequest {
  const events = [{ type: 'bounced' as const, recipient, trackingId, occurredAt: secondsAgo(2) }];
  return mailerSendWebhook({ events, signingSecret: secret, signedAt });
}

/** Hard bounces of messages to `recipients`, in one grouped Mailjet POST with the URL's basic credentials. */
export function mailjetBounces(
  secrets: ProviderSecrets,
  recipients: string[],
  trackingId: string,
  credentials = secrets.mailjet,
): WebhookRequest {
  const events = recipients.map((recipient) => ({ type: 'bounced' as const, recipient, trackingId, occurredAt: secondsAgo(20) }));
  return mailjetWebhook({ events, auth: { basic: credentials }, signedAt });
}

/** A hard bounce of one message to `recipient`: Postal posts one event per request, RSA-signed over its raw bytes. */
export function postalBounce(secrets: ProviderSecrets, recipient: string, trackingId: string, key = secrets.postalKey): WebhookRequest {
  const events = [{ type: 'bounced' as const, recipient, trackingId, occurredAt: secondsAgo(4) }];
  return postalWebhook({ events, privateKey: key, signedAt });
}

function strangerPostal(): string {
  strangerPostalKey ??= createPostalKeyPair().privateKey;
  return strangerPostalKey;
}

const notJsonText = 'this body is not JSON {';

// --- The per-provider cases of the suite. ------------------------------------------------------

export interface WebhookCase {
  /** The webhook route; its events carry `routeProvider(provider)`. */
  provider: WebhookRoute;
  /** A signed request about one message sent with `TRACKING_ID` attached. */
  request(secrets: ProviderSecrets): WebhookRequest;
  /** The same kind of request, signed with a key or credentials that are not the project's. */
  forged(secrets: ProviderSecrets): WebhookRequest;
  /** Authenticated for the project, but its body (or the JSON inside it) is not JSON. */
  notJson(secrets: ProviderSecrets): WebhookRequest;
  /** `recipient status` of every message `request` stores, sorted. */
  messages: string[];
  /** Exactly the suppressions `request` creates, by normalized address. */
  suppressions: Record<string, SuppressionReason>;
  /** The recipients as the sender wrote them. */
  recipients: string[];
  /** Whether a 401 invites basic auth (`WWW-Authenticate: Basic`): providers configured with it. */
  basicAuth: boolean;
}

export const webhookCases: readonly WebhookCase[] = [
  {
    provider: 'ses',
    request: (secrets) => sesBounce(secrets, ['ana@example.org', 'Bo@Example.org'], TRACKING_ID),
    forged: (secrets) => {
      // Signed by the test SNS key, then altered: the signature no longer covers the Message.
      const request = sesBounce(secrets, ['ana@example.org'], TRACKING_ID);
      const envelope = JSON.parse(Buffer.from(request.rawBody).toString('utf8')) as Record<string, string>;
      envelope.Message = envelope.Message!.replace('ana@example.org', 'mallory@example.org');
      return { ...request, rawBody: encoder.encode(JSON.stringify(envelope)) };
    },
    notJson: (secrets) => ({ ...sesBounce(secrets, ['ana@example.org'], TRACKING_ID), rawBody: encoder.encode(notJsonText) }),
    messages: ['ana@example.org bounced', 'bo@example.org bounced'],
    suppressions: { 'ana@example.org': 'hard_bounce', 'bo@example.org': 'hard_bounce' },
    recipients: ['ana@example.org', 'Bo@Example.org'],
    basicAuth: true,
  },
  {
    provider: 'sendgrid',
    request: (secrets) => sendgridEvents(secrets, ['jane@example.com', 'john@example.com'], 'spamreport', TRACKING_ID),
    forged: (secrets) => sendgridEvents(secrets, ['jane@example.com'], 'spamreport', TRACKING_ID, createSendGridKeyPair().privateKey),
    notJson: (secrets) => sendGridWebhook({ payload: notJsonText, privateKey: secrets.sendgridKey, signedAt }),
    messages: ['jane@example.com complained', 'john@example.com complained'],
    suppressions: { 'jane@example.com': 'complaint', 'john@example.com': 'complaint' },
    recipients: ['jane@example.com', 'john@example.com'],
    basicAuth: false,
  },
  {
    provider: 'mailgun',
    request: (secrets) => mailgunDelivered(secrets, 'mia@example.com', TRACKING_ID),
    forged: (secrets) => mailgunDelivered(secrets, 'mia@example.com', TRACKING_ID, `${secrets.mailgunSigningKey}-wrong`),
    // Mailgun signs no body: a body that is not JSON cannot carry the signature either, and is refused as unparseable.
    notJson: () => ({ method: 'POST', headers: { 'content-type': 'application/json' }, rawBody: encoder.encode(notJsonText) }),
    messages: ['mia@example.com delivered'],
    suppressions: {},
    recipients: ['mia@example.com'],
    basicAuth: false,
  },
  {
    provider: 'sparkpost',
    request: (secrets) => sparkpostDeliveries(secrets, ['tia@example.net', 'Uma@Example.net'], TRACKING_ID),
    forged: (secrets) => sparkpostDeliveries(secrets, ['tia@example.net'], TRACKING_ID, wrong(secrets.sparkpost)),
    notJson: (secrets) => sparkPostWebhook({ payload: notJsonText, auth: { basic: secrets.sparkpost }, signedAt }),
    messages: ['tia@example.net delivered', 'uma@example.net delivered'],
    suppressions: {},
    recipients: ['tia@example.net', 'Uma@Example.net'],
    basicAuth: true,
  },
  {
    provider: 'postmark',
    request: (secrets) => postmarkRecord(secrets, 'quinn@example.com', 'Bounce', TRACKING_ID),
    forged: (secrets) => postmarkRecord(secrets, 'quinn@example.com', 'Bounce', TRACKING_ID, wrong(secrets.postmark)),
    notJson: (secrets) => postmarkWebhook({ payload: notJsonText, auth: { basic: secrets.postmark }, signedAt }),
    messages: ['quinn@example.com bounced'],
    suppressions: { 'quinn@example.com': 'hard_bounce' },
    recipients: ['quinn@example.com'],
    basicAuth: true,
  },
  {
    provider: 'mandrill',
    request: (secrets) => mandrillEvents(secrets, ['yan@example.net', 'zoe@example.net'], 'hard_bounce', TRACKING_ID),
    forged: (secrets) => mandrillEvents(secrets, ['yan@example.net'], 'hard_bounce', TRACKING_ID, `${secrets.mandrillKey}-wrong`),
    notJson: (secrets) => mandrillWebhook({ payload: notJsonText, webhookKey: secrets.mandrillKey, url: secrets.mandrillUrl, signedAt }),
    messages: ['yan@example.net bounced', 'zoe@example.net bounced'],
    suppressions: { 'yan@example.net': 'hard_bounce', 'zoe@example.net': 'hard_bounce' },
    recipients: ['yan@example.net', 'zoe@example.net'],
    basicAuth: false,
  },
  {
    provider: 'resend',
    request: (secrets) => resendBounce(secrets, 'Lea@Example.com', TRACKING_ID),
    forged: (secrets) => resendBounce(secrets, 'lea@example.com', TRACKING_ID, `whsec_${randomBytes(24).toString('base64')}`),
    notJson: (secrets) => resendWebhook({ payload: notJsonText, signingSecret: secrets.resendSecret, signedAt }),
    messages: ['lea@example.com bounced'],
    suppressions: { 'lea@example.com': 'hard_bounce' },
    recipients: ['Lea@Example.com'],
    basicAuth: false,
  },
  {
    provider: 'brevo',
    request: (secrets) => brevoBounces(secrets, ['eli@example.org', 'Fay@Example.org'], TRACKING_ID),
    forged: (secrets) => brevoBounces(secrets, ['eli@example.org'], TRACKING_ID, wrong(secrets.brevo)),
    notJson: (secrets) => brevoWebhook({ payload: notJsonText, auth: { basic: secrets.brevo }, signedAt }),
    messages: ['eli@example.org bounced', 'fay@example.org bounced'],
    suppressions: { 'eli@example.org': 'hard_bounce', 'fay@example.org': 'hard_bounce' },
    recipients: ['eli@example.org', 'Fay@Example.org'],
    basicAuth: true,
  },
  {
    provider: 'mailjet',
    request: (secrets) => mailjetBounces(secrets, ['ivy@example.org', 'Jo@Example.org'], TRACKING_ID),
    forged: (secrets) => mailjetBounces(secrets, ['ivy@example.org'], TRACKING_ID, wrong(secrets.mailjet)),
    notJson: (secrets) => mailjetWebhook({ payload: notJsonText, auth: { basic: secrets.mailjet }, signedAt }),
    messages: ['ivy@example.org bounced', 'jo@example.org bounced'],
    suppressions: { 'ivy@example.org': 'hard_bounce', 'jo@example.org': 'hard_bounce' },
    recipients: ['ivy@example.org', 'Jo@Example.org'],
    basicAuth: true,
  },
  {
    provider: 'mailersend',
    request: (secrets) => mailersendBounce(secrets, 'Kim@Example.com', TRACKING_ID),
    forged: (secrets) => mailersendBounce(secrets, 'kim@example.com', TRACKING_ID, `${secrets.mailersendSecret}-wrong`),
    notJson: (secrets) => mailerSendWebhook({ payload: notJsonText, signingSecret: secrets.mailersendSecret, signedAt }),
    messages: ['kim@example.com bounced'],
    suppressions: { 'kim@example.com': 'hard_bounce' },
    recipients: ['Kim@Example.com'],
    basicAuth: false,
  },
  {
    provider: 'postal',
    request: (secrets) => postalBounce(secrets, 'Nia@Example.com', TRACKING_ID),
    forged: (secrets) => postalBounce(secrets, 'nia@example.com', TRACKING_ID, strangerPostal()),
    notJson: (secrets) => postalWebhook({ payload: notJsonText, privateKey: secrets.postalKey, signedAt }),
    messages: ['nia@example.com bounced'],
    suppressions: { 'nia@example.com': 'hard_bounce' },
    recipients: ['Nia@Example.com'],
    basicAuth: false,
  },
  {
    provider: 'ses-eventbridge',
    request: (secrets) => sesEventBridgeBounce(secrets, ['cal@example.org', 'Dot@Example.org'], TRACKING_ID),
    forged: (secrets) => sesEventBridgeBounce(secrets, ['cal@example.org'], TRACKING_ID, `${secrets.eventBridgeKey}-wrong`),
    notJson: (secrets) =>
      sesEventBridgeWebhook({ payload: notJsonText, auth: { headers: { 'X-Webhook-Secret': secrets.eventBridgeKey } }, signedAt }),
    messages: ['cal@example.org bounced', 'dot@example.org bounced'],
    suppressions: { 'cal@example.org': 'hard_bounce', 'dot@example.org': 'hard_bounce' },
    recipients: ['cal@example.org', 'Dot@Example.org'],
    basicAuth: true,
  },
];

/** A webhook request's headers as fetch takes them. */
export function headersOf(request: WebhookRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return headers;
}

// --- Fuzzing: each provider's authenticated request around any JSON document. ---------------------

/**
 * For each provider: a real payload as a JSON document, and how to send any document in its place,
 * authenticated as the provider does (signed anew where the signature covers the body). A fuzz test
 * mutates the document's fields and posts it, so what it sends gets past authentication to parsing and
 * the store.
 */
export interface WebhookFuzzCase {
  provider: WebhookRoute;
  /** The JSON document the provider sends (SES: the notification inside the SNS message). */
  document(secrets: ProviderSecrets): unknown;
  request(secrets: ProviderSecrets, document: unknown): WebhookRequest;
}

const decoder = new TextDecoder();
const jsonOfBody = (request: WebhookRequest): unknown => JSON.parse(decoder.decode(request.rawBody));

export const webhookFuzzCases: readonly WebhookFuzzCase[] = [
  {
    provider: 'ses',
    document: (secrets) => JSON.parse((jsonOfBody(sesBounce(secrets, ['a@example.com'], 'x')) as { Message: string }).Message),
    request: (secrets, document) => sesWebhook({ payload: JSON.stringify(document), topicArn: secrets.topicArn, signedAt }),
  },
  {
    provider: 'sendgrid',
    document: (secrets) => jsonOfBody(sendgridEvents(secrets, ['a@example.com'], 'bounce', 'x')),
    request: (secrets, document) => sendGridWebhook({ payload: JSON.stringify(document), privateKey: secrets.sendgridKey, signedAt }),
  },
  {
    provider: 'mailgun',
    document: (secrets) => (jsonOfBody(mailgunDelivered(secrets, 'a@example.com', 'x')) as Record<string, unknown>)['event-data'],
    // Mailgun signs a fresh token, not the body: every request gets one of its own.
    request: (secrets, document) => mailgunWebhook({ payload: JSON.stringify(document), signingKey: secrets.mailgunSigningKey, signedAt }),
  },
  {
    provider: 'sparkpost',
    document: (secrets) => jsonOfBody(sparkpostDeliveries(secrets, ['a@example.com'], 'x')),
    request: (secrets, document) => sparkPostWebhook({ payload: JSON.stringify(document), auth: { basic: secrets.sparkpost }, signedAt }),
  },
  {
    provider: 'postmark',
    document: (secrets) => jsonOfBody(postmarkRecord(secrets, 'a@example.com', 'Bounce', 'x')),
    request: (secrets, document) => postmarkWebhook({ payload: JSON.stringify(document), auth: { basic: secrets.postmark }, signedAt }),
  },
  {
    provider: 'mandrill',
    document: (secrets) =>
      JSON.parse(
        new URLSearchParams(decoder.decode(mandrillEvents(secrets, ['a@example.com'], 'hard_bounce', 'x').rawBody)).get('mandrill_events')!,
      ),
    request: (secrets, document) =>
      mandrillWebhook({ payload: JSON.stringify(document), webhookKey: secrets.mandrillKey, url: secrets.mandrillUrl, signedAt }),
  },
  {
    provider: 'resend',
    document: (secrets) => jsonOfBody(resendBounce(secrets, 'a@example.com', 'x')),
    request: (secrets, document) => resendWebhook({ payload: JSON.stringify(document), signingSecret: secrets.resendSecret, signedAt }),
  },
  {
    provider: 'brevo',
    document: (secrets) => jsonOfBody(brevoBounces(secrets, ['a@example.com'], 'x')),
    request: (secrets, document) => brevoWebhook({ payload: JSON.stringify(document), auth: { basic: secrets.brevo }, signedAt }),
  },
  {
    provider: 'mailjet',
    document: (secrets) => jsonOfBody(mailjetBounces(secrets, ['a@example.com'], 'x')),
    request: (secrets, document) => mailjetWebhook({ payload: JSON.stringify(document), auth: { basic: secrets.mailjet }, signedAt }),
  },
  {
    provider: 'mailersend',
    document: (secrets) => jsonOfBody(mailersendBounce(secrets, 'a@example.com', 'x')),
    request: (secrets, document) =>
      mailerSendWebhook({ payload: JSON.stringify(document), signingSecret: secrets.mailersendSecret, signedAt }),
  },
  {
    provider: 'postal',
    document: (secrets) => jsonOfBody(postalBounce(secrets, 'a@example.com', 'x')),
    // Written as Rails writes JSON, and signed anew over those bytes.
    request: (secrets, document) => postalWebhook({ payload: document, privateKey: secrets.postalKey, signedAt }),
  },
  {
    provider: 'ses-eventbridge',
    // The whole EventBridge event: its envelope and the SES record in `detail`.
    document: (secrets) => jsonOfBody(sesEventBridgeBounce(secrets, ['a@example.com'], 'x')),
    request: (secrets, document) =>
      sesEventBridgeWebhook({
        payload: JSON.stringify(document),
        auth: { headers: { 'X-Webhook-Secret': secrets.eventBridgeKey } },
        signedAt,
      }),
  },
];
