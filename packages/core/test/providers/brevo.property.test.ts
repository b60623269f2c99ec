import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachBrevoTrackingId } from '../../src/carriers/brevo.js';
import { MailwardenError } from '../../src/errors.js';
import { createBrevoWebhook, parseBrevoWebhook } from '../../src/webhooks/brevo.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { expectSuccessOrMailwardenError } from '../expect-mailwarden-error.js';
import { deliverBrevoEmail } from './brevo.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

const credentials = { username: 'brevo', password: randomBytes(16).toString('hex') };
const auth = { basic: [credentials] };
const webhook = createBrevoWebhook(env);

/** A caller's own `X-Mailin-custom`: none, a JSON object (perhaps with our keys, non-ASCII, spaced out), or text that is no JSON object. */
const customArbitrary = fc.oneof(
  fc.constant(undefined),
  fc
    .dictionary(
      fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom('service_id', 'service_stream', 'user')),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 3 },
    )
    .chain((members) => fc.constantFrom(JSON.stringify(members), JSON.stringify(members, null, 2), `\r\n ${JSON.stringify(members)} `)),
  fc.constantFrom('campaign-7', '[1,2]', '"text"', '42', 'null', '{not json', '  '),
);

const emailArbitrary = fc.record({
  custom: customArbitrary,
  customName: fc.constantFrom('X-Mailin-custom', 'X-Mailin-Custom', 'x-mailin-custom'),
  tags: fc.option(fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 3 }), { nil: undefined }),
  recipients: fc.array(fc.constantFrom('jane@example.net', 'John@Example.net', 'bo@example.org'), { minLength: 1, maxLength: 3 }),
  versions: fc.boolean(),
  epochSeconds: fc.boolean(),
});

/** The caller's members that are not ours, as JSON.parse reads them. */
function othersOf(custom: string | undefined, ours: readonly string[]): Record<string, unknown> {
  if (custom === undefined || custom.trim() === '') return {};
  const parsed = JSON.parse(custom) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(parsed).filter(([name]) => !ours.includes(name)));
}

/** The caller's own `service_stream`, as a receiver reads it back (a non-empty string). */
function callersStream(custom: string | undefined): string | undefined {
  const value =
    custom !== undefined && isJsonObject(custom) ? (JSON.parse(custom) as Record<string, unknown>)['service_stream'] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const isJsonObject = (text: string): boolean => {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
};

describe('Brevo carrier round trip', () => {
  it.each([
    ['any tracking ID', trackingIdArbitrary],
    ['128-code-point tracking IDs', maxLengthTrackingIdArbitrary],
  ])('attach -> Brevo API -> webhook gives back %s, the stream, and the caller’s own header members and tags', async (_, ids) => {
    await fc.assert(
      fc.asyncProperty(ids, optionalStreamArbitrary, emailArbitrary, async (trackingId, stream, given) => {
        const to = given.recipients.map((email) => ({ email }));
        const email = {
          sender: { email: 'news@example.com' },
          subject: 'Hello',
          textContent: 'Hi',
          headers: { 'X-Campaign': 'spring', ...(given.custom === undefined ? {} : { [given.customName]: given.custom }) },
          ...(given.tags === undefined ? {} : { tags: given.tags }),
          ...(given.versions ? { messageVersions: to.map((recipient) => ({ to: [recipient] })) } : { to }),
        };
        const ours = stream === undefined ? ['service_id'] : ['service_id', 'service_stream'];
        let sent: typeof email;
        try {
          sent = attachBrevoTrackingId(email, trackingId, { stream });
        } catch (error) {
          // Only a header of the caller's that is no JSON object cannot share the one header.
          expect(error).toBeInstanceOf(MailwardenError);
          expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
          expect(given.custom !== undefined && given.custom.trim() !== '' && !isJsonObject(given.custom)).toBe(true);
          return;
        }
        expect(given.custom === undefined || given.custom.trim() === '' || isJsonObject(given.custom)).toBe(true);
        const { request, messageId } = deliverBrevoEmail(JSON.stringify(sent), credentials, given.epochSeconds);
        const receipt = await webhook.receive(request, auth);
        expect(receipt.warnings).toEqual([]);
        expect(receipt.events).toHaveLength(given.recipients.length);
        for (const event of receipt.events) {
          expect(event.trackingId).toBe(trackingId);
          // Without a stream of ours, the caller's own `service_stream` is left as it is (pinned in brevo.test.ts).
          expect(event.stream).toBe(stream ?? callersStream(given.custom));
          expect(event.messageId).toBe(messageId);
          expect(event.type).toBe('delivered');
        }
        const echoed = JSON.parse((sent.headers as Record<string, string>)['X-Mailin-custom']!) as Record<string, unknown>;
        expect(othersOf(JSON.stringify(echoed), ours)).toStrictEqual(othersOf(given.custom, ours));
        expect(sent.headers['X-Campaign']).toBe('spring');
        expect((sent as { tags?: unknown }).tags).toStrictEqual(given.tags);
      }),
      { numRuns: 300 },
    );
  });

  it('attaching twice is attaching once', () => {
    fc.assert(
      fc.property(trackingIdArbitrary, optionalStreamArbitrary, customArbitrary, (trackingId, stream, custom) => {
        const email = { to: [{ email: 'a@example.net' }], headers: custom === undefined ? {} : { 'X-Mailin-custom': custom } };
        let once: typeof email;
        try {
          once = attachBrevoTrackingId(email, trackingId, { stream });
        } catch {
          return;
        }
        expect(attachBrevoTrackingId(once, trackingId, { stream })).toStrictEqual(once);
      }),
    );
  });
});

describe('parseBrevoWebhook on arbitrary input', () => {
  const eventLike = fc.record(
    {
      event: fc.oneof(fc.constantFrom('delivered', 'hard_bounce', 'soft_bounce', 'blocked', 'click', 'unsubscribed'), fc.jsonValue()),
      email: fc.oneof(fc.constant('a@example.net'), fc.jsonValue()),
      ts_epoch: fc.oneof(fc.constantFrom(1_764_000_000_000, 1_764_000_000), fc.jsonValue(), fc.string()),
      ts_event: fc.jsonValue(),
      'message-id': fc.oneof(fc.constant('<1.2@smtp-relay.mailin.fr>'), fc.jsonValue()),
      'X-Mailin-custom': fc.oneof(fc.constant('{"service_id":"x"}'), fc.string(), fc.jsonValue()),
      reason: fc.jsonValue(),
      link: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );

  it('returns a receipt or throws invalid_payload for any JSON value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), eventLike, fc.array(eventLike), fc.array(fc.jsonValue())), (value) =>
        expectSuccessOrMailwardenError(() => parseBrevoWebhook(value), 'invalid_payload'),
      ),
    );
  });

  it('a retried body gives the same event keys; events that say different things have different keys', () => {
    fc.assert(
      fc.property(fc.array(eventLike, { minLength: 1, maxLength: 6 }), (batch) => {
        const first = parseBrevoWebhook(JSON.parse(JSON.stringify(batch)));
        const again = parseBrevoWebhook(JSON.parse(JSON.stringify(batch)));
        expect(again.events.map((event) => event.eventKey)).toStrictEqual(first.events.map((event) => event.eventKey));
        // Events that differ in what they say (type, message, recipient, time, link) differ in key.
        const said = first.events.map((event) =>
          JSON.stringify([event.type, event.messageId, event.recipient, event.occurredAt.getTime(), event.details?.url ?? null]),
        );
        for (let i = 0; i < said.length; i++) {
          for (let j = i + 1; j < said.length; j++) {
            if (said[i] !== said[j]) expect(first.events[i]!.eventKey).not.toBe(first.events[j]!.eventKey);
          }
        }
      }),
    );
  });

  it('receive returns a receipt or throws invalid_payload for any authenticated body', async () => {
    const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.array(eventLike).map((batch) => JSON.stringify(batch)),
          fc.uint8Array(),
        ),
        async (body) => {
          const rawBody = typeof body === 'string' ? new TextEncoder().encode(body) : body;
          try {
            await webhook.receive({ method: 'POST', headers: { authorization }, rawBody }, auth);
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('invalid_payload');
          }
        },
      ),
    );
  });
});
