// The demo data of `serve --demo`, which the screenshots are taken from: its stated size, message
// histories as providers report them, and campaigns that last days, the same on every start.
import { createMailwarden, createMemoryStore, type Mailwarden, type Message, type MessageDetail } from '@mailwarden/core';
import { describe, expect, test, vi } from 'vitest';
import { DEMO_ALERTS, DEMO_ALLOWLISTED, DEMO_DEFAULT_STREAM, DEMO_PROJECT, DEMO_RULES, seedDemo } from '../src/demo.js';

const now = Date.parse('2026-11-24T10:00:00.000Z');
const trackingIds = [
  'black-friday-2026',
  'newsletter-2026-11-13',
  'newsletter-2026-11-20',
  'order-confirmation',
  'password-reset',
  'welcome-2026-11',
];

async function seeded(at = now): Promise<Mailwarden> {
  const mailwarden = createMailwarden();
  await seedDemo(mailwarden, at);
  return mailwarden;
}

async function allMessages(mailwarden: Mailwarden): Promise<Message[]> {
  const messages: Message[] = [];
  let cursor: string | undefined;
  do {
    const page = await mailwarden.messages.list(DEMO_PROJECT, { limit: 100, ...(cursor === undefined ? {} : { cursor }) });
    messages.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return messages;
}

async function allDetails(mailwarden: Mailwarden): Promise<MessageDetail[]> {
  return Promise.all((await allMessages(mailwarden)).map(async (message) => (await mailwarden.messages.get(DEMO_PROJECT, message.id))!));
}

describe('seedDemo', () => {
  test('records the size docs/server.md states, every event accepted: 1 168 messages in six tracking IDs, 48 suppressions', async () => {
    const mailwarden = createMailwarden({ defaultStream: { [DEMO_PROJECT]: DEMO_DEFAULT_STREAM } });
    const applyEvents = vi.spyOn(mailwarden, 'applyEvents');
    await seedDemo(mailwarden, now);
    for (const result of applyEvents.mock.results)
      await expect(result.value).resolves.toMatchObject({ skipped: 0, duplicates: 0, warnings: [] });

    expect(await allMessages(mailwarden)).toHaveLength(1168);
    expect((await mailwarden.trackingIds.list(DEMO_PROJECT)).items.map((item) => item.trackingId)).toStrictEqual(trackingIds);
    const { items: suppressions } = await mailwarden.suppressions.list(DEMO_PROJECT, { limit: 100 });
    const bySource: Record<string, number> = {};
    for (const { source, reason } of suppressions) bySource[`${source} ${reason}`] = (bySource[`${source} ${reason}`] ?? 0) + 1;
    expect(bySource).toStrictEqual({
      'api manual': 3,
      'import manual': 3,
      'webhook hard_bounce': 32,
      'webhook complaint': 10,
    });
    // The recipients' unsubscribes, in the demo's default stream.
    const { items: unsubscribes } = await mailwarden.suppressions.list(DEMO_PROJECT, { stream: DEMO_DEFAULT_STREAM, limit: 100 });
    expect(unsubscribes.map(({ source, reason }) => `${source} ${reason}`)).toStrictEqual(Array(27).fill('unsubscribe manual'));
  });

  test("with the demo's rule, the full mailbox is suppressed by it and expires; the allowlisted seed inbox is not suppressed", async () => {
    const mailwarden = createMailwarden({ now: () => now, rules: DEMO_RULES, defaultStream: { [DEMO_PROJECT]: DEMO_DEFAULT_STREAM } });
    await seedDemo(mailwarden, now);
    const { items } = await mailwarden.suppressions.list(DEMO_PROJECT, { limit: 100 });
    expect(items).toHaveLength(49);
    const full = await mailwarden.suppressions.check(DEMO_PROJECT, 'full-mailbox@example.com');
    expect(full).toMatchObject({ suppressed: true, reason: 'hard_bounce', source: 'webhook', rule: { bounces: 3, days: 7 } });
    expect(full).toHaveProperty('expires_at');
    expect(await mailwarden.suppressions.check(DEMO_PROJECT, DEMO_ALLOWLISTED)).toStrictEqual({
      email: DEMO_ALLOWLISTED,
      suppressed: false,
    });
    expect((await mailwarden.allowlist.list(DEMO_PROJECT)).items.map((item) => item.entry)).toStrictEqual([DEMO_ALLOWLISTED]);
  });

  test("with the demo's alerts and feed: the bounce alert fires on the first 100 messages and resolves, the complaint alert fires and stays up", async () => {
    const mailwarden = createMailwarden({
      store: createMemoryStore({ changes: {} }),
      now: () => now,
      rules: DEMO_RULES,
      alerts: DEMO_ALERTS,
      defaultStream: { [DEMO_PROJECT]: DEMO_DEFAULT_STREAM },
    });
    await seedDemo(mailwarden, now);
    const { items } = await mailwarden.changes.list(DEMO_PROJECT, { kinds: ['alert'], limit: 1000 });
    expect(items.map((change) => [change.kind, 'alert' in change ? change.alert : undefined])).toStrictEqual([
      ['alert.bounce_rate', expect.objectContaining({ firing: true, messages: 100, count: 7 })],
      ['alert.bounce_rate', expect.objectContaining({ firing: false, messages: 201, count: 8 })],
      ['alert.complaint_rate', expect.objectContaining({ firing: true, messages: 322, count: 1 })],
    ]);
    expect(await mailwarden.alerts.status(DEMO_PROJECT)).toMatchObject({ bounce: { firing: false }, complaint: { firing: true } });
  });

  test('the same data on every start, relative to its start', async () => {
    const later = now + 3 * 24 * 60 * 60 * 1000 + 1234;
    const shifted = (details: MessageDetail[], by: number) =>
      details
        .map((message) => ({
          ...message,
          timeline: message.timeline.map((entry) => ({ ...entry, occurredAt: Date.parse(entry.occurredAt) - by })),
        }))
        .map(({ id, messageId, status, facts, timeline }) => ({
          id,
          messageId,
          status,
          facts,
          timeline: timeline.map(({ id: _, ...entry }) => entry),
        }))
        .sort((a, b) => a.id.localeCompare(b.id));
    const [first, second] = await Promise.all([seeded(now).then(allDetails), seeded(later).then(allDetails)]);
    expect(shifted(second, later - now)).toStrictEqual(shifted(first, 0));
  });

  test('each message has the history its provider reports: sent first, SMTP details on every bounce and deferral, nothing after now', async () => {
    const messages = await allDetails(await seeded());
    const sequences = new Set<string>();
    for (const message of messages) {
      const types = message.timeline.map((entry) => entry.type);
      sequences.add(types.join(' '));
      // Postmark reports no send.
      if (message.provider !== 'postmark') expect(types[0], message.messageId).toBe('sent');
      for (const entry of message.timeline) {
        expect(Date.parse(entry.occurredAt)).toBeLessThanOrEqual(now);
        if (entry.type === 'bounced' || entry.type === 'deferred' || entry.type === 'rejected') {
          expect(entry.smtpStatus, `${message.messageId} ${entry.type}`).toMatch(
            entry.type === 'deferred' || entry.bounceClass === 'soft' ? /^4\./ : /^5\./,
          );
          expect(entry.diagnostic, `${message.messageId} ${entry.type}`).toBeDefined();
        }
        if (entry.type === 'bounced') expect(entry.bounceClassification, message.messageId).toBeDefined();
        if (entry.type === 'complained' && (message.provider === 'ses' || message.provider === 'sparkpost'))
          expect(entry.feedbackType).toBe('abuse');
      }
    }
    for (const sequence of [
      'sent delivered opened clicked',
      'sent deferred delivered',
      'sent bounced',
      'sent deferred deferred bounced',
      'sent rejected',
      'delivered opened',
    ]) {
      expect(sequences, sequence).toContain(sequence);
    }
    expect([...sequences].some((sequence) => sequence.includes('unsubscribed'))).toBe(true);
    expect([...sequences].some((sequence) => sequence.includes('complained'))).toBe(true);
  });

  test('each tracking ID lasts over a week, a newsletter delivered and opened mostly on its first days', async () => {
    const mailwarden = await seeded();
    for (const trackingId of trackingIds) {
      const { buckets } = await mailwarden.trackingIds.stats(DEMO_PROJECT, trackingId, {
        from: '2026-10-25',
        to: '2026-11-25',
        interval: 'day',
      });
      const active = buckets.filter((bucket) => bucket.delivered + bucket.opened + bucket.clicked > 0);
      expect(active.length, trackingId).toBeGreaterThanOrEqual(trackingId === 'black-friday-2026' ? 6 : 8);
      if (!trackingId.startsWith('newsletter-')) continue;
      const first = buckets.findIndex((bucket) => bucket.delivered > 0);
      const share = (field: 'delivered' | 'opened') => {
        const total = buckets.reduce((sum, bucket) => sum + bucket[field], 0);
        return (buckets[first]![field] + buckets[first + 1]![field]) / total;
      };
      expect(share('delivered'), trackingId).toBeGreaterThan(0.95);
      expect(share('opened'), trackingId).toBeGreaterThan(0.5);
    }
  });
});
