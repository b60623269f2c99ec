import { messageDetailSchema, listMessagesResponseSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { TIMESTAMP, expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { TRACKING_ID, sendgridEvents, sesBounce } from './provider-requests.js';

export function describeMessageTimelineTests(open: OpenApp): void {
  describe('one message with its timeline', () => {
    test('GET /messages/{id} opens a listed message by its id: its events once each, oldest first, with what the provider said', async () => {
      const app = await open();
      const secrets = app.secrets.acme;
      const bounce = sesBounce(secrets, ['dee@example.org'], TRACKING_ID);
      // The same notification twice: SNS retries it, and the timeline keeps it once.
      for (const request of [bounce, bounce, sendgridEvents(secrets, ['ana@example.com'], 'delivered', 'spring-sale')]) {
        const answer = await app.webhook(request === bounce ? 'ses' : 'sendgrid', app.projects.acme, request);
        expect(answer.status, answer.text).toBe(200);
      }
      const page = expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/messages`), 200, listMessagesResponseSchema);
      for (const item of page.items) expect(item.id).toMatch(/^[0-9a-f]{32}$/);
      const listed = page.items.find((item) => item.recipient === 'dee@example.org')!;

      const message = expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/messages/${listed.id}`), 200, messageDetailSchema);
      const { timeline, ...rest } = message;
      expect(rest).toStrictEqual(listed);
      expect(timeline).toHaveLength(1);
      expect(timeline[0]).toMatchObject({
        type: 'bounced',
        provider: 'ses',
        bounceClass: 'hard',
        smtpStatus: '5.1.1',
        diagnostic: 'smtp; 550 5.1.1 user unknown',
        bounceClassification: 'Permanent/General',
      });
      expect(timeline[0]!.occurredAt).toMatch(TIMESTAMP);
      expect(timeline[0]!.occurredAt).toBe(listed.lastEventAt);
    });

    test('an unknown id is not_found; an id of another form is invalid_request', async () => {
      const app = await open();
      const path = (id: string) => `/projects/${app.projects.acme}/messages/${id}`;
      expectError(await app.api('GET', path('0'.repeat(32))), 404, 'not_found');
      for (const id of ['abc', 'A'.repeat(32), `${'0'.repeat(32)}0`, encodeURIComponent(`${'0'.repeat(31)}\u00e9`)]) {
        expectError(await app.api('GET', path(id)), 400, 'invalid_request');
      }
    });
  });
}
