// Webhook intake throughput, all six receivers: `ingestWebhook` (verify, parse, normalize, store in the
// memory store) next to the floor of merely parsing the same bytes (and, for the providers that post
// one event per request, checking its signature).
import { createHmac, createPublicKey, createSign, generateKeyPairSync, timingSafeEqual, verify } from 'node:crypto';
import { createMailwarden, type Mailwarden, type WebhookRequest } from '@mailwarden/core';
import { fetchTestSnsCertificate, testSnsSigner, webhooksFor, type TestEvent } from '@mailwarden/core/testing';
import { goalCell, recordGoal } from './goals.js';
import { measureGroup, ratio } from './measure.js';
import { formatCount, formatNanos, formatPercent, formatRatio, type BenchSuite, type ReportSection } from './report.js';

const PROJECT = 'bench';
const BATCH = 1000;
const MANDRILL_URL = 'https://hooks.example.com/projects/bench/webhooks/mandrill';
const MANDRILL_KEY = 'bench-mandrill-key';
const MAILERSEND_SECRET = 'bench-mailersend-signing-secret';
const RESEND_SECRET = `whsec_${Buffer.from('bench-resend-signing-secret').toString('base64')}`;
const encoder = new TextEncoder();

const sendgridKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const sendgridPublicKey = sendgridKeys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

// Postal signs with its server's RSA key: the project holds the public half, as Postal shows it.
const postalKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const postalPublicKey = postalKeys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

const MAILGUN_KEY = 'bench-mailgun-signing-key';
const sharedSecret = { basic: [{ username: 'bench', password: 'bench-secret' }] };
const auth = {
  sendgrid: { publicKey: sendgridPublicKey },
  mandrill: { webhookKey: MANDRILL_KEY, url: MANDRILL_URL },
  resend: { signingSecret: RESEND_SECRET },
  brevo: sharedSecret,
  sparkpost: sharedSecret,
  postmark: sharedSecret,
  mailjet: sharedSecret,
  mailersend: { signingSecret: MAILERSEND_SECRET },
  postal: { publicKey: postalPublicKey },
  mailgun: { signingKey: MAILGUN_KEY },
  ses: { topicArns: ['arn:aws:sns:us-east-1:123456789012:bench-ses-events'] },
  'ses-eventbridge': { headers: [{ name: 'X-Webhook-Secret', value: 'bench-eventbridge-secret' }] },
};

function createBenchMailwarden(): Mailwarden {
  return createMailwarden({
    webhooks: { auth: { [PROJECT]: auth }, environment: { fetchCertificate: fetchTestSnsCertificate } },
  });
}

// Every provider reports these (Postmark has no event for a message merely sent).
const testEventTypes = ['delivered', 'opened', 'clicked', 'delivered', 'opened', 'bounced'] as const;

/** `count` events of the testing kit's kind, three per message, over 10 tracking IDs, all new in `batch`. */
function testEvents(batch: number, count: number): TestEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    type: testEventTypes[i % testEventTypes.length]!,
    recipient: `user${i}@example${i % 50}.com`,
    messageId: `m${batch}x${Math.floor(i / 3)}`,
    trackingId: `campaign-${i % 10}`,
  }));
}

/** Events one per request (Postmark, Mailgun; SES one per message and type, so one here): PER_REQUEST requests per operation. */
const PER_REQUEST = 100;

const sendgridEventNames = ['processed', 'delivered', 'open', 'delivered', 'click', 'bounce'] as const;

/** A SendGrid batch as SendGrid posts it: a JSON array with `\r\n` between events, signed over the raw bytes. */
function sendgridRequest(batch: number): { request: WebhookRequest; text: string } {
  // Signed now: the receiver refuses timestamps outside its tolerance, as it should.
  const timestamp = Math.floor(Date.now() / 1000);
  const events = Array.from({ length: BATCH }, (_, i) => {
    const event = sendgridEventNames[i % sendgridEventNames.length]!;
    return JSON.stringify({
      email: `user${i}@example${i % 50}.com`,
      timestamp,
      'smtp-id': `<${batch}.${i}@bench.example>`,
      event,
      ...(event === 'bounce' ? { type: 'bounce', reason: '550 5.1.1 unknown user', status: '5.1.1' } : {}),
      ...(event === 'click' ? { url: 'https://example.com/offer' } : {}),
      sg_event_id: `ev-${batch}-${i}`,
      sg_message_id: `m${batch}x${Math.floor(i / 3)}.filter0001.16648.5515E0B88.0`,
      service_id: `campaign-${i % 10}`,
    });
  });
  const text = `[${events.join(',\r\n')}]`;
  const rawBody = encoder.encode(text);
  const signer = createSign('sha256');
  signer.update(String(timestamp));
  signer.update(rawBody);
  const signature = signer.sign(sendgridKeys.privateKey).toString('base64');
  return {
    text,
    request: {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-twilio-email-event-webhook-signature': signature,
        'x-twilio-email-event-webhook-timestamp': String(timestamp),
      },
      rawBody,
    },
  };
}

const mandrillEventNames = ['send', 'delivered', 'open', 'click', 'hard_bounce'] as const;

/** A Mandrill post: one form field `mandrill_events` holding a JSON array, signed over URL + fields. */
function mandrillRequest(batch: number): { request: WebhookRequest; body: string } {
  const events = Array.from({ length: BATCH }, (_, i) => {
    const event = mandrillEventNames[i % mandrillEventNames.length]!;
    const id = `m${batch}x${Math.floor(i / 2)}`;
    return {
      event,
      ts: 1_790_000_000 + i,
      _id: id,
      ...(event === 'click' ? { url: 'https://example.com/offer' } : {}),
      msg: {
        ts: 1_790_000_000,
        _id: id,
        state: event === 'hard_bounce' ? 'bounced' : 'sent',
        email: `user${i}@example${i % 50}.com`,
        sender: 'news@example.org',
        subject: 'November news',
        tags: ['news'],
        metadata: { service_id: `campaign-${i % 10}` },
      },
    };
  });
  const value = JSON.stringify(events);
  const signature = createHmac('sha1', MANDRILL_KEY).update(`${MANDRILL_URL}mandrill_events${value}`).digest('base64');
  const body = new URLSearchParams({ mandrill_events: value }).toString();
  return {
    body,
    request: {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-mandrill-signature': signature },
      rawBody: encoder.encode(body),
      url: MANDRILL_URL,
    },
  };
}

/** The SNS signing certificate's key, parsed once, as the receiver caches it. */
const snsKey = createPublicKey(testSnsSigner.certificate);

/** What SNS signs of a notification: its fields in order, each name and value on a line. */
function snsSignedText(envelope: Record<string, string>): string {
  let text = '';
  for (const name of ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']) {
    if (envelope[name] !== undefined) text += `${name}\n${envelope[name]}\n`;
  }
  return text;
}

/** The floor of one SES request: parse the envelope, check its signature, parse the notification in it. */
function sesFloor(rawBody: Uint8Array): unknown {
  const envelope = JSON.parse(Buffer.from(rawBody).toString('utf8')) as Record<string, string>;
  const algorithm = envelope.SignatureVersion === '2' ? 'sha256' : 'sha1';
  if (!verify(algorithm, Buffer.from(snsSignedText(envelope), 'utf8'), snsKey, Buffer.from(envelope.Signature!, 'base64')))
    throw new Error('bench: bad SNS signature');
  return JSON.parse(envelope.Message!);
}

/** The floor of one Mailgun request: parse the body, check the HMAC of timestamp and token. */
function mailgunFloor(rawBody: Uint8Array): unknown {
  const body = JSON.parse(Buffer.from(rawBody).toString('utf8')) as { signature: { timestamp: string; token: string; signature: string } };
  const { timestamp, token, signature } = body.signature;
  const expected = createHmac('sha256', MAILGUN_KEY)
    .update(timestamp + token)
    .digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw new Error('bench: bad Mailgun signature');
  return body;
}

const parseJson = (rawBody: Uint8Array): unknown => JSON.parse(Buffer.from(rawBody).toString('utf8'));

/** MailerSend's floor: the parse, and the hex HMAC-SHA256 of the raw body that its `Signature` check computes. */
function mailerSendFloor(rawBody: Uint8Array): unknown {
  createHmac('sha256', MAILERSEND_SECRET).update(rawBody).digest('hex');
  return parseJson(rawBody);
}

const resendKey = Buffer.from(RESEND_SECRET.slice('whsec_'.length), 'base64');

/** Resend's floor: the parse, and the HMAC-SHA256 over `svix-id.svix-timestamp.body` that a Svix signature check computes. */
function resendFloor(rawBody: Uint8Array): unknown {
  createHmac('sha256', resendKey).update('msg_bench.1775034000.').update(rawBody).digest();
  return parseJson(rawBody);
}

/** Postal's signatures travel in a header, beside the body the floor is given: each body's, recorded as its request is built. */
const postalSignatures = new WeakMap<Uint8Array, Buffer>();

function postalRequests(batch: number): WebhookRequest[] {
  const requests = webhooksFor('postal', auth.postal, testEvents(batch, PER_REQUEST), { postalPrivateKey: postalKeys.privateKey });
  for (const request of requests) postalSignatures.set(request.rawBody, Buffer.from(request.headers['x-postal-signature-256']!, 'base64'));
  return requests;
}

/** Postal's floor: the parse, and the RSA-SHA256 verification of the raw body that its `X-Postal-Signature-256` check does. */
function postalFloor(rawBody: Uint8Array): unknown {
  if (!verify('sha256', rawBody, postalKeys.publicKey, postalSignatures.get(rawBody)!)) throw new Error('bench: bad Postal signature');
  return parseJson(rawBody);
}

interface IngestCase {
  provider:
    | 'sendgrid'
    | 'sparkpost'
    | 'mandrill'
    | 'resend'
    | 'brevo'
    | 'mailjet'
    | 'mailersend'
    | 'postal'
    | 'postmark'
    | 'mailgun'
    | 'ses'
    | 'ses-eventbridge';
  label: string;
  floorLabel: string;
  /** The requests of one operation (one batch, or PER_REQUEST single-event requests), all new. */
  requests: (batch: number) => WebhookRequest[];
  floor: (rawBody: Uint8Array) => unknown;
  /** Events per operation, where neither one batch of BATCH nor one event per request (Brevo: two arrays of 500). */
  eventsPerOperation?: number;
}

const cases: IngestCase[] = [
  {
    provider: 'sendgrid',
    label: 'SendGrid: 1 000-event JSON batch',
    floorLabel: '`JSON.parse`',
    requests: (batch) => [sendgridRequest(batch).request],
    floor: parseJson,
  },
  {
    provider: 'sparkpost',
    label: 'SparkPost: 1 000-event JSON batch',
    floorLabel: '`JSON.parse`',
    requests: (batch) => webhooksFor('sparkpost', auth.sparkpost, testEvents(batch, BATCH)),
    floor: parseJson,
  },
  {
    provider: 'mandrill',
    label: 'Mandrill: 1 000-event `mandrill_events` form',
    floorLabel: 'form decode + `JSON.parse`',
    requests: (batch) => [mandrillRequest(batch).request],
    floor: (rawBody) => JSON.parse(new URLSearchParams(Buffer.from(rawBody).toString('utf8')).get('mandrill_events')!),
  },
  {
    provider: 'resend',
    label: `Resend: ${PER_REQUEST} requests of one event`,
    floorLabel: '`JSON.parse` + HMAC-SHA256 of each',
    requests: (batch) => webhooksFor('resend', auth.resend, testEvents(batch, PER_REQUEST)),
    floor: resendFloor,
  },
  {
    provider: 'brevo',
    label: 'Brevo: 1 000 events, batched arrays of 500',
    floorLabel: '`JSON.parse` of each',
    // A batched Brevo webhook posts at most 500 events per request.
    requests: (batch) => {
      const events = testEvents(batch, BATCH);
      return [events.slice(0, 500), events.slice(500)].flatMap((part) => webhooksFor('brevo', auth.brevo, part));
    },
    floor: parseJson,
    eventsPerOperation: BATCH,
  },
  {
    provider: 'mailjet',
    label: 'Mailjet: 1 000-event grouped JSON array',
    floorLabel: '`JSON.parse`',
    // Mailjet's MessageIDs are 17-digit integers, past 2^53: the receiver reads their digits from the text.
    requests: (batch) =>
      webhooksFor(
        'mailjet',
        auth.mailjet,
        testEvents(batch, BATCH).map((event, i) => ({
          ...event,
          messageId: `1${String(batch).padStart(8, '0')}${String(Math.floor(i / 3)).padStart(8, '0')}`,
        })),
      ),
    floor: parseJson,
  },
  {
    provider: 'mailersend',
    label: `MailerSend: ${PER_REQUEST} requests of one event`,
    floorLabel: '`JSON.parse` + HMAC-SHA256 of each',
    requests: (batch) => webhooksFor('mailersend', auth.mailersend, testEvents(batch, PER_REQUEST)),
    floor: mailerSendFloor,
  },
  {
    provider: 'postal',
    label: `Postal: ${PER_REQUEST} requests of one event`,
    floorLabel: '`JSON.parse` + RSA-SHA256 check of each',
    requests: postalRequests,
    floor: postalFloor,
  },
  {
    provider: 'postmark',
    label: `Postmark: ${PER_REQUEST} requests of one event`,
    floorLabel: '`JSON.parse` of each',
    requests: (batch) => webhooksFor('postmark', auth.postmark, testEvents(batch, PER_REQUEST)),
    floor: parseJson,
  },
  {
    provider: 'mailgun',
    label: `Mailgun: ${PER_REQUEST} requests of one event`,
    floorLabel: '`JSON.parse` + HMAC-SHA256 check of each',
    requests: (batch) => webhooksFor('mailgun', auth.mailgun, testEvents(batch, PER_REQUEST)),
    floor: mailgunFloor,
  },
  {
    provider: 'ses',
    label: `SES: ${PER_REQUEST} SNS messages of one event`,
    floorLabel: '`JSON.parse` of envelope and message + RSA signature check of each',
    // One message per event: SES sends one notification per message and event type.
    requests: (batch) =>
      webhooksFor(
        'ses',
        auth.ses,
        testEvents(batch, PER_REQUEST).map((event, i) => ({ ...event, messageId: `s${batch}x${i}` })),
      ),
    floor: sesFloor,
  },
  {
    provider: 'ses-eventbridge',
    label: `SES via EventBridge: ${PER_REQUEST} requests of one event`,
    floorLabel: '`JSON.parse` of each',
    // One SES event per message, as for SNS; the connection's secret header is the only check.
    requests: (batch) =>
      webhooksFor(
        'ses-eventbridge',
        auth['ses-eventbridge'],
        testEvents(batch, PER_REQUEST).map((event, i) => ({ ...event, messageId: `e${batch}x${i}` })),
      ),
    floor: parseJson,
  },
];

export const ingestSuite: BenchSuite = {
  name: 'ingest',
  async run(context) {
    const options = context.quick ? { samples: 3, operationsPerSample: 3 } : { samples: 7, operationsPerSample: 5 };
    const mailwarden = createBenchMailwarden();
    let batch = 0;
    const ingestAll = async (provider: IngestCase['provider'], requests: WebhookRequest[]) => {
      let accepted = 0;
      for (const request of requests) accepted += (await mailwarden.ingestWebhook(provider, PROJECT, request)).accepted;
      return accepted;
    };

    const rows: string[][] = [];
    for (const { provider, label, floorLabel, requests, floor, eventsPerOperation } of cases) {
      const sample = requests(batch++);
      const events = eventsPerOperation ?? (sample.length === 1 ? BATCH : sample.length);
      const accepted = await ingestAll(provider, sample);
      if (accepted !== events) throw new Error(`bench: ${accepted} of ${events} ${provider} events accepted`);
      context.log(`${label}…`);
      const [ours, parsed] = await measureGroup(
        [
          {
            name: `ingest ${provider}`,
            itemsPerOp: events,
            setup: () => requests(batch++),
            run: (built: WebhookRequest[]) => ingestAll(provider, built),
          },
          {
            name: `${provider} floor`,
            itemsPerOp: events,
            setup: () => requests(batch++).map((request) => request.rawBody),
            run: (bodies: Uint8Array[]) => bodies.map(floor),
          },
        ],
        options,
      );
      const value = ratio(ours!, parsed!);
      recordGoal(`ingest ${provider}`, value);
      rows.push([
        label,
        formatCount(ours!.itemsPerSecond),
        formatNanos(ours!.nsPerOp / events),
        floorLabel,
        formatCount(parsed!.itemsPerSecond),
        formatRatio(value),
        goalCell(`ingest ${provider}`, value),
        `${formatPercent(ours!.spread)} / ${formatPercent(parsed!.spread)}`,
      ]);
    }

    const section: ReportSection = {
      title: 'Webhook intake: the twelve routes into the memory store',
      intro: [
        `\`mailwarden.ingestWebhook\` end to end, as the HTTP layer calls it: authentication (SendGrid ECDSA P-256 over the ` +
          `raw bytes; Mandrill HMAC-SHA1 over URL + fields; Mailgun HMAC-SHA256 of timestamp and token, and its one-time token; ` +
          `SES the SNS RSA signature; SparkPost and Postmark basic auth), parsing, normalization to one event per recipient, ` +
          `tracking-ID extraction, and \`applyEvents\` into the memory store (dedup, message merge, counters, counts over time, ` +
          `timelines, suppression of the hard bounces). Every operation is new (new message ids and event keys), three events ` +
          `per message (SES: one), over 10 tracking IDs. SendGrid, SparkPost and Mandrill post batches of ${formatCount(BATCH)}; ` +
          `Postmark, Mailgun and SES post one event per request, so an operation is ${PER_REQUEST} requests. The floor does only ` +
          `what no receiver can skip with the same bytes: parse them, and for Mailgun and SES check the signature. Building ` +
          `and signing requests is not timed. SparkPost, Postmark, Mailgun and SES requests come from the testing kit ` +
          `(\`webhooksFor\`). SES via EventBridge (a second route for SES events: the whole EventBridge event per request, ` +
          `authenticated by the connection's secret header) posts one event per request too. Resend posts one event per request, ` +
          `signed as Svix signs (HMAC-SHA256 over id, timestamp and body); its floor parses and computes that HMAC.`,
        `Brevo posts batched arrays of at most 500 events, authenticated with basic auth (or a bearer token or header); ` +
          `an operation is two of them. Its floor parses each.`,
        `Mailjet posts grouped batches of ${formatCount(BATCH)} with basic auth; its MessageIDs, past 2^53, are read as ` +
          `their digits from the text (a scan the \`JSON.parse\` floor does not do).`,
        `MailerSend posts one event per request, signed with the hex HMAC-SHA256 of its raw body; its floor parses and computes that HMAC.`,
        `Postal posts one event per request, signed with its server's RSA key (SHA-256, and SHA-1 for older receivers) over the ` +
          `raw body; the receiver verifies the SHA-256 one, and so does its floor, after parsing.`,
      ],
      tables: [
        {
          columns: ['case', 'ours, events/s', 'ours per event', 'floor', 'floor, events/s', 'ours / floor', 'goal', 'noise (ours / floor)'],
          rows,
        },
      ],
    };
    await mailwarden.close();
    return [section];
  },
};
