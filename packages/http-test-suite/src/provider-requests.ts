import { createHmac, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import {
  attachMailgunTrackingId,
  attachMandrillTrackingId,
  attachPostmarkTrackingId,
  attachSendGridTrackingId,
  attachSesTagsTrackingId,
  attachSparkPostTrackingId,
  type Provider,
  type ProviderAuth,
  type SuppressionReason,
  type WebhookEnvironment,
  type WebhookRequest,
} from '@mailwarden/core';
// The provider stand-ins of core's tests: they sign exactly as each provider does, so requests built
// here are the ones a real provider would post.
import { mailgunApiUserVariables, mailgunJsonWebhook } from '../../core/src/testing/mailgun.js';
import { deliverMandrillMessage } from '../../core/src/testing/mandrill.js';
import { deliverPostmarkMessages } from '../../core/src/testing/postmark.js';
import { deliverSendGridMail, signSendGridBody } from '../../core/src/testing/sendgrid.js';
import { sesNotification, sesV2SendEmail, snsEnvelope, snsRequest, snsSigningCertificate } from '../../core/src/testing/ses.js';
import { deliverSparkPostTransmission } from '../../core/src/testing/sparkpost.js';

/** The receivers' clock: the simulators date their events and signatures just before it. */
export const WEBHOOK_NOW = Date.parse('2026-04-01T09:00:05Z');
const nowSeconds = Math.floor(WEBHOOK_NOW / 1000);

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
  sendgridKey: KeyObject;
  sendgridPublicKey: string;
  mailgunSigningKey: string;
  sparkpost: Credentials;
  postmark: Credentials;
  mandrillKey: string;
  mandrillUrl: string;
}

export function createProviderSecrets(projectId: string): ProviderSecrets {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    projectId,
    topicArn: `arn:aws:sns:us-east-1:123456789012:ses-events-${projectId}`,
    sendgridKey: privateKey,
    sendgridPublicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    mailgunSigningKey: randomBytes(16).toString('hex'),
    sparkpost: { username: 'sparkpost', password: randomBytes(12).toString('base64url') },
    postmark: { username: 'postmark', password: randomBytes(12).toString('base64url') },
    mandrillKey: randomBytes(16).toString('base64url'),
    mandrillUrl: `https://hooks.example.com/mw/projects/${projectId}/webhooks/mandrill`,
  };
}

/** The webhook authentication a project configures for all six providers. */
export function providerAuthOf(secrets: ProviderSecrets): ProviderAuth {
  return {
    ses: { topicArns: [secrets.topicArn] },
    sendgrid: { publicKey: secrets.sendgridPublicKey },
    mailgun: { signingKey: secrets.mailgunSigningKey },
    sparkpost: { basic: [secrets.sparkpost] },
    postmark: { basic: [secrets.postmark] },
    mandrill: { webhookKey: secrets.mandrillKey, url: secrets.mandrillUrl },
  };
}

/** The receivers' environment: a fixed clock, the test SNS certificate, and SNS confirmations recorded, not fetched. */
export interface TestWebhookEnvironment extends WebhookEnvironment {
  confirmedSubscriptions: string[];
}

export function createWebhookEnvironment(): TestWebhookEnvironment {
  const confirmedSubscriptions: string[] = [];
  return {
    now: () => WEBHOOK_NOW,
    fetchCertificate: async () => snsSigningCertificate,
    confirmSubscription: async (url) => void confirmedSubscriptions.push(url),
    confirmedSubscriptions,
  };
}

const encoder = new TextEncoder();
const basicHeader = ({ username, password }: Credentials) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const wrong = (credentials: Credentials): Credentials => ({ ...credentials, password: `${credentials.password}-wrong` });

// --- One builder per provider: a signed request about one message, as the provider posts it. ----

export function sesBounce(secrets: ProviderSecrets, recipients: string[], trackingId: string): WebhookRequest {
  const send = attachSesTagsTrackingId(
    {
      FromEmailAddress: 'shop@example.com',
      Destination: { ToAddresses: recipients },
      Content: { Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } } },
    },
    trackingId,
    { api: 'v2' },
  );
  return snsRequest(snsEnvelope(JSON.stringify(sesNotification(sesV2SendEmail(send), 'Bounce')), { topicArn: secrets.topicArn }));
}

export function sesSubscriptionConfirmation(secrets: ProviderSecrets): WebhookRequest {
  return snsRequest(snsEnvelope('You have chosen to subscribe to the topic.', { type: 'SubscriptionConfirmation', topicArn: secrets.topicArn }));
}

export function sendgridEvents(secrets: ProviderSecrets, recipients: string[], event: string, trackingId: string, key = secrets.sendgridKey): WebhookRequest {
  const send = attachSendGridTrackingId(
    {
      from: { email: 'news@example.com' },
      subject: 'Hello',
      content: [{ type: 'text/plain', value: 'Hi' }],
      personalizations: recipients.map((email) => ({ to: [{ email }] })),
    },
    trackingId,
  );
  return signedSendGridRequest(deliverSendGridMail(send, event, nowSeconds - 60), key);
}

function signedSendGridRequest(rawBody: Uint8Array, key: KeyObject): WebhookRequest {
  const timestamp = String(nowSeconds);
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-twilio-email-event-webhook-signature': signSendGridBody(key, timestamp, rawBody),
      'x-twilio-email-event-webhook-timestamp': timestamp,
    },
    rawBody,
  };
}

export function mailgunDelivered(secrets: ProviderSecrets, recipient: string, trackingId: string, signingKey = secrets.mailgunSigningKey): WebhookRequest {
  const send = attachMailgunTrackingId({ from: 'news@mg.example.com', to: recipient, subject: 'Hello', text: 'Hi' }, trackingId);
  const rawBody = mailgunJsonWebhook(mailgunApiUserVariables(send), { event: 'delivered', recipient, timestamp: nowSeconds - 60, signingKey });
  return { method: 'POST', headers: { 'content-type': 'application/json' }, rawBody };
}

export function sparkpostDeliveries(secrets: ProviderSecrets, recipients: string[], trackingId: string, credentials = secrets.sparkpost): WebhookRequest {
  const send = attachSparkPostTrackingId(
    { recipients: recipients.map((address) => ({ address })), content: { from: 'news@example.com', subject: 'Hello', text: 'Hi' } },
    trackingId,
  );
  return deliverSparkPostTransmission(send, credentials).request;
}

/** A Postmark record; without a tracking ID when `trackingId` is `null`. */
export function postmarkRecord(
  secrets: ProviderSecrets,
  recipient: string,
  record: 'Delivery' | 'Bounce',
  trackingId: string | null,
  credentials = secrets.postmark,
): WebhookRequest {
  const message = { From: 'news@example.com', To: recipient, Subject: 'Hello', TextBody: 'Hi' };
  const send = trackingId === null ? message : attachPostmarkTrackingId(message, trackingId);
  return deliverPostmarkMessages(send, { record, escapeNonAscii: true, credentials })[0]!.request;
}

export function mandrillEvents(secrets: ProviderSecrets, recipients: string[], event: string, trackingId: string, webhookKey = secrets.mandrillKey): WebhookRequest {
  const send = attachMandrillTrackingId(
    { message: { from_email: 'news@example.com', to: recipients.map((email) => ({ email })), subject: 'Hello', text: 'Hi' } },
    trackingId,
  );
  return deliverMandrillMessage(send, { webhookKey, url: secrets.mandrillUrl, event, escapeNonAscii: true }).request;
}

/** A form Mandrill signs: URL, then each field sorted by name as name + value, HMAC-SHA1, base64. */
function mandrillForm(secrets: ProviderSecrets, fields: Record<string, string>): WebhookRequest {
  const text = secrets.mandrillUrl + Object.keys(fields).sort().map((name) => name + fields[name]).join('');
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-mandrill-signature': createHmac('sha1', secrets.mandrillKey).update(text).digest('base64') },
    rawBody: encoder.encode(new URLSearchParams(fields).toString()),
  };
}

const notJsonText = 'this body is not JSON {';

// --- The per-provider cases of the suite. ------------------------------------------------------

export interface WebhookCase {
  provider: Provider;
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
    forged: (secrets) =>
      sendgridEvents(secrets, ['jane@example.com'], 'spamreport', TRACKING_ID, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey),
    notJson: (secrets) => signedSendGridRequest(encoder.encode(notJsonText), secrets.sendgridKey),
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
    notJson: (secrets) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basicHeader(secrets.sparkpost) },
      rawBody: encoder.encode(notJsonText),
    }),
    messages: ['tia@example.net delivered', 'uma@example.net delivered'],
    suppressions: {},
    recipients: ['tia@example.net', 'Uma@Example.net'],
    basicAuth: true,
  },
  {
    provider: 'postmark',
    request: (secrets) => postmarkRecord(secrets, 'quinn@example.com', 'Bounce', TRACKING_ID),
    forged: (secrets) => postmarkRecord(secrets, 'quinn@example.com', 'Bounce', TRACKING_ID, wrong(secrets.postmark)),
    notJson: (secrets) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basicHeader(secrets.postmark) },
      rawBody: encoder.encode(notJsonText),
    }),
    messages: ['quinn@example.com bounced'],
    suppressions: { 'quinn@example.com': 'hard_bounce' },
    recipients: ['quinn@example.com'],
    basicAuth: true,
  },
  {
    provider: 'mandrill',
    request: (secrets) => mandrillEvents(secrets, ['yan@example.net', 'zoe@example.net'], 'hard_bounce', TRACKING_ID),
    forged: (secrets) => mandrillEvents(secrets, ['yan@example.net'], 'hard_bounce', TRACKING_ID, `${secrets.mandrillKey}-wrong`),
    notJson: (secrets) => mandrillForm(secrets, { mandrill_events: notJsonText }),
    messages: ['yan@example.net bounced', 'zoe@example.net bounced'],
    suppressions: { 'yan@example.net': 'hard_bounce', 'zoe@example.net': 'hard_bounce' },
    recipients: ['yan@example.net', 'zoe@example.net'],
    basicAuth: false,
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
  provider: Provider;
  /** The JSON document the provider sends (SES: the notification inside the SNS message). */
  document(secrets: ProviderSecrets): unknown;
  request(secrets: ProviderSecrets, document: unknown): WebhookRequest;
}

const decoder = new TextDecoder();
const jsonOfBody = (request: WebhookRequest): unknown => JSON.parse(decoder.decode(request.rawBody));
const withBody = (request: WebhookRequest, document: unknown): WebhookRequest => ({ ...request, rawBody: encoder.encode(JSON.stringify(document)) });

export const webhookFuzzCases: readonly WebhookFuzzCase[] = [
  {
    provider: 'ses',
    document: (secrets) => JSON.parse((jsonOfBody(sesBounce(secrets, ['a@example.com'], 'x')) as { Message: string }).Message),
    request: (secrets, document) => snsRequest(snsEnvelope(JSON.stringify(document), { topicArn: secrets.topicArn })),
  },
  {
    provider: 'sendgrid',
    document: (secrets) => jsonOfBody(sendgridEvents(secrets, ['a@example.com'], 'bounce', 'x')),
    request: (secrets, document) => signedSendGridRequest(encoder.encode(JSON.stringify(document)), secrets.sendgridKey),
  },
  {
    provider: 'mailgun',
    document: (secrets) => (jsonOfBody(mailgunDelivered(secrets, 'a@example.com', 'x')) as Record<string, unknown>)['event-data'],
    // Mailgun signs a fresh token, not the body: every request gets one of its own.
    request: (secrets, document) => {
      const { signature } = jsonOfBody(mailgunDelivered(secrets, 'a@example.com', 'x')) as { signature: unknown };
      return { method: 'POST', headers: { 'content-type': 'application/json' }, rawBody: encoder.encode(JSON.stringify({ signature, 'event-data': document })) };
    },
  },
  {
    provider: 'sparkpost',
    document: (secrets) => jsonOfBody(sparkpostDeliveries(secrets, ['a@example.com'], 'x')),
    request: (secrets, document) => withBody(sparkpostDeliveries(secrets, ['a@example.com'], 'x'), document),
  },
  {
    provider: 'postmark',
    document: (secrets) => jsonOfBody(postmarkRecord(secrets, 'a@example.com', 'Bounce', 'x')),
    request: (secrets, document) => withBody(postmarkRecord(secrets, 'a@example.com', 'Bounce', 'x'), document),
  },
  {
    provider: 'mandrill',
    document: (secrets) => JSON.parse(new URLSearchParams(decoder.decode(mandrillEvents(secrets, ['a@example.com'], 'hard_bounce', 'x').rawBody)).get('mandrill_events')!),
    request: (secrets, document) => mandrillForm(secrets, { mandrill_events: JSON.stringify(document) }),
  },
];
