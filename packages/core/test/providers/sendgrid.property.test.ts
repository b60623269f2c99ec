import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachSendGridTrackingId } from '../../src/carriers/sendgrid.js';
import { MailwardenError } from '../../src/errors.js';
import { deliveryEventSchema } from '../../src/api-schemas.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { createSendGridWebhook, parseSendGridWebhook } from '../../src/webhooks/sendgrid.js';
import { signSendGridBody } from '../../src/testing/sendgrid.js';
import { deliverSendGridMail } from './sendgrid.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

const now = Date.parse('2026-01-01T00:00:00Z');
const env: WebhookEnvironment = {
  now: () => now,
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const auth = { publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
const webhook = createSendGridWebhook(env);
const timestamp = String(Math.floor(now / 1000));

function signed(rawBody: Uint8Array): WebhookRequest {
  return {
    method: 'POST',
    headers: {
      'x-twilio-email-event-webhook-signature': signSendGridBody(privateKey, timestamp, rawBody),
      'x-twilio-email-event-webhook-timestamp': timestamp,
    },
    rawBody,
  };
}

const argsArbitrary = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength: 20 }) },
    { weight: 1, arbitrary: fc.nat({ max: 6000 }).map((n) => 'x'.repeat(n)) },
  ),
  { maxKeys: 3 },
);

/** A send request as callers write it: with or without personalizations, snake or camel custom args. */
const requestArbitrary = fc.record(
  {
    custom_args: argsArbitrary,
    customArgs: argsArbitrary,
    personalizations: fc.array(
      fc.record(
        {
          to: fc
            .array(fc.constantFrom('jane@example.com', 'john@example.com'), { minLength: 1, maxLength: 2 })
            .map((emails) => emails.map((email) => ({ email }))),
          custom_args: argsArbitrary,
          customArgs: argsArbitrary,
        },
        { requiredKeys: ['to'] },
      ),
      { minLength: 1, maxLength: 3 },
    ),
  },
  { requiredKeys: ['personalizations'] },
);

/** Computed here from SendGrid's documented rule, independently of the helper: UTF-8 of keys and values. */
function customArgsBytes(...layers: (Record<string, string> | undefined)[]): number {
  // Spread, not Object.assign: a generated key may be "__proto__".
  const merged = layers.reduce<Record<string, string>>((all, layer) => ({ ...all, ...layer }), {});
  return Object.entries(merged).reduce((sum, [key, value]) => sum + Buffer.byteLength(key) + Buffer.byteLength(value), 0);
}

type GeneratedRequest = typeof requestArbitrary extends fc.Arbitrary<infer T> ? T : never;

function limitCannotBeMet(request: GeneratedRequest, id: string, stream: string | undefined): boolean {
  const ours: Record<string, string> = stream === undefined ? { service_id: id } : { service_id: id, service_stream: stream };
  const message = { ...request.customArgs, ...request.custom_args };
  if (customArgsBytes(message, ours) > 10_000) return true;
  return request.personalizations.some((p) => customArgsBytes(message, p.customArgs, p.custom_args, ours) > 10_000);
}

describe('SendGrid carrier round trip (the carrier law of docs/decisions.md)', () => {
  it('attach → SendGrid → signed webhook → receive gives back exactly the tracking ID and the stream', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(trackingIdArbitrary, maxLengthTrackingIdArbitrary),
        optionalStreamArbitrary,
        requestArbitrary,
        async (id, stream, request) => {
          let attached;
          try {
            attached = stream === undefined ? attachSendGridTrackingId(request, id) : attachSendGridTrackingId(request, id, { stream });
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
            expect(limitCannotBeMet(request, id, stream)).toBe(true);
            return;
          }
          expect(limitCannotBeMet(request, id, stream)).toBe(false);
          const receipt = await webhook.receive(signed(deliverSendGridMail(attached, 'delivered', Number(timestamp))), auth);
          const recipients = request.personalizations.reduce((sum, p) => sum + p.to.length, 0);
          expect(receipt.events).toHaveLength(recipients);
          for (const event of receipt.events) {
            expect(event.trackingId).toBe(id);
            expect(event.stream).toBe(stream);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

const knownKeys = ['event', 'email', 'timestamp', 'sg_message_id', 'smtp-id', 'type', 'reason', 'response', 'url', 'service_id'];
const eventNames = [
  'processed',
  'delivered',
  'deferred',
  'bounce',
  'dropped',
  'open',
  'click',
  'spamreport',
  'unsubscribe',
  'group_unsubscribe',
  'group_resubscribe',
];
const plausibleItem = fc.dictionary(
  fc.constantFrom(...knownKeys),
  fc.oneof(
    fc.constantFrom(
      ...eventNames,
      'blocked',
      'bounce',
      'Bounced Address',
      'a@example.com',
      'x.y.z',
      '.',
      'constructor',
      '__proto__',
      'toString',
    ),
    fc.double(),
    fc.integer(),
    fc.jsonValue(),
  ),
);

/** Items shaped like SendGrid's, every field optional, values from the ones that steer the mapping. */
const words = fc.constantFrom('bounce', 'blocked', 'Bounced Address', 'SPAM REPORTING ADDRESS', 'constructor', '__proto__', 'toString', '');
const structuredItem = fc.record(
  {
    event: fc.oneof(fc.constantFrom(...eventNames), words),
    email: fc.oneof(fc.constant('a@example.com'), fc.string()),
    timestamp: fc.oneof(fc.integer(), fc.double(), fc.constant('1767225600')),
    sg_message_id: fc.oneof(fc.constantFrom('abc.filter.0', '.x', 'x'.repeat(1100)), fc.string()),
    type: words,
    reason: words,
    url: fc.string(),
    service_id: fc.oneof(fc.string(), fc.integer(), fc.double()),
  },
  { requiredKeys: [] },
);

/** Returns normally (a receipt whose events all pass the event schema) or throws invalid_payload; nothing else. */
function expectReceiptOrInvalidPayload(run: () => ReturnType<typeof parseSendGridWebhook>): void {
  let receipt;
  try {
    receipt = run();
  } catch (error) {
    expect(error).toBeInstanceOf(MailwardenError);
    expect((error as MailwardenError).code).toBe('invalid_payload');
    return;
  }
  expect(receipt.events.length + receipt.skipped).toBe(receipt.sources.length + receipt.warnings.length);
  for (const event of receipt.events) expect(deliveryEventSchema.safeParse(event).success).toBe(true);
}

describe('parseSendGridWebhook never throws anything but invalid_payload', () => {
  it('on arbitrary JSON', () => {
    fc.assert(fc.property(fc.jsonValue(), (payload) => expectReceiptOrInvalidPayload(() => parseSendGridWebhook(payload))));
  });

  it('on arrays of plausible events', () => {
    fc.assert(fc.property(fc.array(plausibleItem), (payload) => expectReceiptOrInvalidPayload(() => parseSendGridWebhook(payload))));
  });

  it('on arrays of structured events', () => {
    fc.assert(
      fc.property(fc.array(structuredItem), (payload) => expectReceiptOrInvalidPayload(() => parseSendGridWebhook(payload))),
      { numRuns: 500 },
    );
  });

  it('on arbitrary values made JSON', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const text = JSON.stringify(value);
        expectReceiptOrInvalidPayload(() => parseSendGridWebhook(text === undefined ? undefined : JSON.parse(text)));
      }),
    );
  });

  it('on arbitrary signed bodies through the receiver', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.array(plausibleItem).map((items) => JSON.stringify(items)),
        ),
        async (text) => {
          let failure: unknown;
          const receipt = await webhook.receive(signed(new TextEncoder().encode(text)), auth).catch((error: unknown) => {
            failure = error;
          });
          if (failure === undefined) expect(receipt).toBeDefined();
          else expect((failure as MailwardenError).code).toBe('invalid_payload');
        },
      ),
      { numRuns: 200 },
    );
  });
});
