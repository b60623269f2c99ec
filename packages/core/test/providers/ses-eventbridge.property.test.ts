import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachSesHeaderTrackingId } from '../../src/carriers/ses-header.js';
import { attachSesTagsTrackingId } from '../../src/carriers/ses-tags.js';
import { deliveryEventSchema } from '../../src/api-schemas.js';
import { isMailwardenError } from '../../src/errors.js';
import type { DeliveryEvent } from '../../src/events/delivery-event.js';
import { sesEventBridgeEvent } from '../../src/testing/ses-eventbridge.js';
import { testEventTypes, type TestEvent } from '../../src/testing/test-event.js';
import { webhooksFor } from '../../src/testing/webhooks-for.js';
import { createWebhookIngest } from '../../src/webhooks/ingest.js';
import { sesNotification, type SentMessage } from '../../src/testing/ses.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { createSesEventBridgeWebhook, parseSesEventBridgeWebhook } from '../../src/webhooks/ses-eventbridge.js';
import { parseSesWebhook } from '../../src/webhooks/ses.js';
import { mimeMessage, sesV1SendRawEmail, sesV2SendEmail } from './ses.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

// SES through EventBridge carries the same SES record as SNS does, so the laws of the SES carriers hold
// on this route too: attach → SES → EventBridge API destination → receive gives back the same ID.

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-04-01T09:00:05Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const eventBridge = createSesEventBridgeWebhook(env);
const auth = { headers: [{ name: 'x-api-key', value: 'eventbridge-secret' }] };
const anyTrackingId = fc.oneof(trackingIdArbitrary, maxLengthTrackingIdArbitrary);
const to = ['ana@example.org', 'bo@example.org'];
const eventTypes = fc.constantFrom('Delivery' as const, 'Bounce' as const, 'Open' as const, 'Click' as const);

/** What SES does with the sent message, published to the default bus and posted by an API destination. */
async function deliverAndRead(sent: SentMessage, eventType: 'Delivery' | 'Bounce' | 'Open' | 'Click', stream: string | undefined) {
  const notification = sesNotification(sent, eventType, { family: 'event-publishing', includeHeaders: true });
  const body = JSON.stringify(sesEventBridgeEvent(notification, new Date('2026-04-01T09:00:03Z')));
  const request: WebhookRequest = {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-api-key': 'eventbridge-secret' },
    rawBody: new TextEncoder().encode(body),
  };
  const receipt = await eventBridge.receive(request, auth);
  expect(receipt.warnings).toEqual([]);
  expect(receipt.events.map((event) => event.recipient)).toEqual(sent.destination);
  expect(receipt.events.map((event) => event.provider)).toEqual(sent.destination.map(() => 'ses'));
  expect(receipt.events.map((event) => event.stream)).toEqual(sent.destination.map(() => stream));
  // One place for the SES mapping: the same events the SNS receiver makes of this record delivered raw.
  expect(receipt).toEqual(parseSesWebhook(notification, { snsMessageId: null }));
  return receipt.events.map((event) => event.trackingId);
}

describe('carrier round trip: attach → SES → EventBridge → receive gives back the same tracking ID', () => {
  it('X-Service-Id in a raw MIME message', async () => {
    await fc.assert(
      fc.asyncProperty(anyTrackingId, optionalStreamArbitrary, eventTypes, async (id, stream, eventType) => {
        const raw = attachSesHeaderTrackingId(mimeMessage(to), id, { stream });
        const sent = sesV1SendRawEmail({ RawMessage: { Data: Buffer.from(raw, 'utf8') } });
        expect(await deliverAndRead(sent, eventType, stream)).toEqual([id, id]);
      }),
      { numRuns: 100 },
    );
  });

  it('X-Service-Id in SES v2 Content.Simple.Headers', async () => {
    await fc.assert(
      fc.asyncProperty(anyTrackingId, optionalStreamArbitrary, eventTypes, async (id, stream, eventType) => {
        const request = attachSesHeaderTrackingId(
          { FromEmailAddress: 'shop@example.com', Destination: { ToAddresses: to }, Content: { Simple: { Subject: { Data: 'Hi' } } } },
          id,
          { stream },
        );
        expect(await deliverAndRead(sesV2SendEmail(request), eventType, stream)).toEqual([id, id]);
      }),
      { numRuns: 100 },
    );
  });

  it('v2 EmailTags, or tracking_id_not_carriable when the tag limit truly cannot be met', async () => {
    await fc.assert(
      fc.asyncProperty(anyTrackingId, optionalStreamArbitrary, eventTypes, async (id, stream, eventType) => {
        let tagged: Record<string, unknown>;
        try {
          tagged = attachSesTagsTrackingId(
            {
              FromEmailAddress: 'shop@example.com',
              Destination: { ToAddresses: to },
              Content: { Simple: { Subject: { Data: 'Hi' } } },
              EmailTags: [{ Name: 'campaign', Value: 'c' }],
            },
            id,
            { api: 'v2', stream },
          );
        } catch (error) {
          if (!isMailwardenError(error) || error.code !== 'tracking_id_not_carriable') throw error;
          expect(Math.ceil((Buffer.byteLength(id, 'utf8') * 4) / 3)).toBeGreaterThan(256);
          return;
        }
        expect((tagged.EmailTags as unknown[])[0]).toEqual({ Name: 'campaign', Value: 'c' });
        expect(await deliverAndRead(sesV2SendEmail(tagged), eventType, stream)).toEqual([id, id]);
      }),
      { numRuns: 100 },
    );
  });
});

const jsonish = fc.jsonValue({ maxDepth: 3 });
/** EventBridge-shaped bodies whose fields are each plausible or arbitrary JSON. */
const eventLike = fc.record(
  {
    version: fc.oneof(fc.constant('0'), jsonish),
    id: fc.oneof(fc.uuid(), jsonish),
    'detail-type': fc.oneof(fc.constantFrom('Email Bounced', 'Email Delivered', 'Email Opened', 'Sending Status Enabled'), jsonish),
    source: fc.oneof(fc.constant('aws.ses'), jsonish),
    detail: fc.oneof(
      jsonish,
      fc.record(
        {
          eventType: fc.oneof(fc.constantFrom('Bounce', 'Delivery', 'Open', 'Subscription'), jsonish),
          mail: fc.oneof(
            jsonish,
            fc.record(
              {
                messageId: fc.oneof(fc.string(), jsonish),
                timestamp: fc.oneof(fc.constant('2026-01-01T00:00:00Z'), jsonish),
                destination: fc.oneof(fc.array(fc.oneof(fc.emailAddress(), jsonish)), jsonish),
                headers: fc.oneof(
                  fc.array(fc.record({ name: fc.constantFrom('X-Service-Id', 'X-Service-Stream'), value: jsonish })),
                  jsonish,
                ),
                tags: fc.oneof(
                  fc.dictionary(fc.constantFrom('service_id', 'service_id_enc', 'service_stream'), fc.array(fc.string())),
                  jsonish,
                ),
              },
              { requiredKeys: [] },
            ),
          ),
          bounce: fc.oneof(
            jsonish,
            fc.record({
              bounceType: jsonish,
              bouncedRecipients: fc.array(fc.record({ emailAddress: fc.oneof(fc.emailAddress(), jsonish) })),
            }),
          ),
          delivery: fc.oneof(jsonish, fc.record({ recipients: fc.array(fc.oneof(fc.emailAddress(), jsonish)) })),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

describe('the receiver never throws anything but MailwardenError', () => {
  it('parseSesEventBridgeWebhook on arbitrary and EventBridge-shaped JSON: a receipt of valid events, or invalid_payload', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), eventLike), (value) => {
        try {
          const receipt = parseSesEventBridgeWebhook(value);
          expect(receipt.sources).toHaveLength(receipt.events.length);
          for (const event of receipt.events) {
            expect(event.provider).toBe('ses');
            if (event.eventKey.length <= 512) expect(deliveryEventSchema.safeParse(event).success).toBe(true);
          }
        } catch (error) {
          if (!isMailwardenError(error) || error.code !== 'invalid_payload') throw error;
        }
      }),
      { numRuns: 500 },
    );
  });

  it('receive on arbitrary bodies and credentials: a receipt, invalid_payload or webhook_unauthorized', async () => {
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.string().map((text) => new TextEncoder().encode(text)),
      eventLike.map((value) => new TextEncoder().encode(JSON.stringify(value))),
    );
    const headers = fc.record(
      { 'x-api-key': fc.constantFrom('eventbridge-secret', 'guess', ''), authorization: fc.constantFrom('Bearer x', 'Basic !!', '') },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(body, headers, async (rawBody, requestHeaders) => {
        try {
          await eventBridge.receive({ method: 'POST', headers: requestHeaders, rawBody }, auth);
        } catch (error) {
          if (!isMailwardenError(error) || (error.code !== 'invalid_payload' && error.code !== 'webhook_unauthorized')) throw error;
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('testing kit round trip (property): webhooksFor ses-eventbridge → intake stores the events reported', () => {
  it('events in, the same events stored, grouped one SES event per request', async () => {
    const event = fc
      .record({
        type: fc.constantFrom(...testEventTypes),
        bounceClass: fc.constantFrom('hard' as const, 'soft' as const, undefined),
        recipient: fc.emailAddress(),
        trackingId: fc.option(trackingIdArbitrary, { nil: null }),
        stream: optionalStreamArbitrary,
        occurredAt: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }),
      })
      .map(({ bounceClass, stream, ...rest }): TestEvent => {
        const base = stream === undefined ? rest : { ...rest, stream };
        return base.type === 'bounced' ? { ...base, bounceClass } : base;
      });
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 5 }), async (events) => {
        const requests = webhooksFor('ses-eventbridge', auth, events);
        const stored: DeliveryEvent[] = [];
        const ingest = createWebhookIngest(
          async (_projectId, applied) => {
            stored.push(...applied);
            return { accepted: applied.length, duplicates: 0, skipped: 0, warnings: [] };
          },
          { auth: { acme: { 'ses-eventbridge': auth } }, environment: env },
        );
        for (const request of requests) await ingest('ses-eventbridge', 'acme', request);
        const reported = requests.flatMap((request) => request.events);
        expect(
          stored.map((stored) => ({
            provider: stored.provider,
            type: stored.type,
            bounceClass: stored.bounceClass ?? null,
            recipient: stored.recipient,
            messageId: stored.messageId,
            trackingId: stored.trackingId,
            ...(stored.stream == null ? {} : { stream: stored.stream }),
            occurredAt: stored.occurredAt,
          })),
        ).toStrictEqual(reported);
        expect(reported.map(({ provider, type, recipient, trackingId }) => ({ provider, type, recipient, trackingId }))).toStrictEqual(
          events.map((given) => ({ provider: 'ses', type: given.type, recipient: given.recipient, trackingId: given.trackingId ?? null })),
        );
      }),
      { numRuns: 100 },
    );
  });
});
