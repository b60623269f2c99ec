// Webhook intake throughput: a 1 000-event SendGrid batch and a 1 000-event Mandrill form, verified,
// parsed, normalized and stored in the memory store by `ingestWebhook`, next to the floor of merely
// parsing the same bytes.
import { createHmac, createSign, generateKeyPairSync } from 'node:crypto';
import { createMailwarden, type Mailwarden, type WebhookRequest } from '@mailwarden/core';
import { measureGroup, ratio, type Measurement } from './measure.js';
import { formatCount, formatNanos, formatPercent, formatRatio, type BenchSuite, type ReportSection } from './report.js';

const PROJECT = 'bench';
const BATCH = 1000;
const MANDRILL_URL = 'https://hooks.example.com/projects/bench/webhooks/mandrill';
const MANDRILL_KEY = 'bench-mandrill-key';
const encoder = new TextEncoder();

const sendgridKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const sendgridPublicKey = sendgridKeys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

function createBenchMailwarden(): Mailwarden {
  return createMailwarden({
    webhooks: {
      auth: { [PROJECT]: { sendgrid: { publicKey: sendgridPublicKey }, mandrill: { webhookKey: MANDRILL_KEY, url: MANDRILL_URL } } },
    },
  });
}

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

export const ingestSuite: BenchSuite = {
  name: 'ingest',
  async run(context) {
    const options = context.quick ? { samples: 3, operationsPerSample: 3 } : { samples: 7, operationsPerSample: 5 };
    const mailwarden = createBenchMailwarden();
    let batch = 0;

    const check = await mailwarden.ingestWebhook('sendgrid', PROJECT, sendgridRequest(batch++).request);
    if (check.accepted !== BATCH) throw new Error(`bench: ${check.accepted} of a SendGrid batch accepted`);
    const checkMandrill = await mailwarden.ingestWebhook('mandrill', PROJECT, mandrillRequest(batch++).request);
    if (checkMandrill.accepted !== BATCH) throw new Error(`bench: ${checkMandrill.accepted} of a Mandrill batch accepted`);

    context.log('SendGrid batches…');
    const [sendgrid, sendgridFloor] = await measureGroup(
      [
        {
          name: 'ingest SendGrid batch',
          itemsPerOp: BATCH,
          setup: () => sendgridRequest(batch++).request,
          run: (request: WebhookRequest) => mailwarden.ingestWebhook('sendgrid', PROJECT, request),
        },
        {
          name: 'JSON.parse of the same bytes',
          itemsPerOp: BATCH,
          setup: () => sendgridRequest(batch++).request.rawBody,
          run: (rawBody: Uint8Array) => JSON.parse(Buffer.from(rawBody).toString('utf8')),
        },
      ],
      options,
    );
    context.log('Mandrill forms…');
    const [mandrill, mandrillFloor] = await measureGroup(
      [
        {
          name: 'ingest Mandrill form',
          itemsPerOp: BATCH,
          setup: () => mandrillRequest(batch++).request,
          run: (request: WebhookRequest) => mailwarden.ingestWebhook('mandrill', PROJECT, request),
        },
        {
          name: 'form decode + JSON.parse of the same bytes',
          itemsPerOp: BATCH,
          setup: () => mandrillRequest(batch++).request.rawBody,
          run: (rawBody: Uint8Array) => JSON.parse(new URLSearchParams(Buffer.from(rawBody).toString('utf8')).get('mandrill_events')!),
        },
      ],
      options,
    );

    const row = (what: string, ours: Measurement, floor: Measurement) => [
      what,
      formatCount(ours.itemsPerSecond),
      formatNanos(ours.nsPerOp),
      formatCount(floor.itemsPerSecond),
      formatRatio(ratio(ours, floor)),
      `${formatPercent(ours.spread)} / ${formatPercent(floor.spread)}`,
    ];
    const section: ReportSection = {
      title: `Webhook intake: batches of ${formatCount(BATCH)} events into the memory store`,
      intro: [
        `\`mailwarden.ingestWebhook\` end to end, as the HTTP layer calls it: signature verification over the raw ` +
          `bytes (SendGrid ECDSA P-256; Mandrill HMAC-SHA1 over URL + fields), parsing, normalization to one event per ` +
          `recipient, tracking-ID extraction, and \`applyEvents\` into the memory store (dedup, message merge, ` +
          `counters, suppression of the hard bounces). Every batch is new (new message ids and event keys), over 10 ` +
          `tracking IDs. The floor parses the same bytes and does nothing else: \`JSON.parse\` for SendGrid, form ` +
          `decoding then \`JSON.parse\` of \`mandrill_events\` for Mandrill. Building and signing a request is not timed.`,
      ],
      tables: [
        {
          columns: ['case', 'ours, events/s', 'ours per batch', 'floor, events/s', 'ours / floor', 'noise (ours / floor)'],
          rows: [
            row('SendGrid: 1 000-event JSON batch', sendgrid!, sendgridFloor!),
            row('Mandrill: 1 000-event `mandrill_events` form', mandrill!, mandrillFloor!),
          ],
        },
      ],
    };
    await mailwarden.close();
    return [section];
  },
};
