// Listing filters after purgeExpired: a purged message leaves every filtered listing, through the
// indexes of migration 4 as through the others; suppressions never expire and stay listed by reason.
import { createMailwarden, type DeliveryEvent } from '@mailwarden/core';
import { afterAll, expect, test } from 'vitest';
import { connect, freshStore } from './database.js';

const sql = connect({ max: 2 });
afterAll(() => sql.end());

const DAY = 86_400_000;
const now = Date.UTC(2026, 10, 1);
let sequence = 0;
const event = (overrides: Partial<DeliveryEvent>): DeliveryEvent => ({
  provider: 'sendgrid',
  type: 'delivered',
  messageId: `m-${++sequence}`,
  recipient: 'jane@example.com',
  trackingId: 'camp',
  occurredAt: new Date(now),
  eventKey: `e-${sequence}`,
  ...overrides,
});

test('a purged message leaves every filtered listing; suppressions stay listed by reason and time', async () => {
  const { store, drop } = await freshStore(sql, { retention: { messagesMs: 30 * DAY } });
  try {
    const mailwarden = createMailwarden({ store });
    await mailwarden.applyEvents('acme', [
      event({ messageId: 'old', type: 'bounced', bounceClass: 'hard', occurredAt: new Date(now - 40 * DAY) }),
      event({ messageId: 'new', occurredAt: new Date(now - DAY) }),
    ]);
    expect((await mailwarden.messages.list('acme', { recipient: 'jane@example.com', provider: 'sendgrid' })).count).toBe(2);
    expect(await store.purgeExpired(now)).toBe(1);
    const since = new Date(now - 100 * DAY).toISOString();
    for (const query of [
      { recipient: 'Jane@example.com' },
      { provider: 'sendgrid' as const },
      { from: since },
      { to: new Date(now).toISOString() },
    ]) {
      expect(
        (await mailwarden.messages.list('acme', query)).items.map((item) => item.messageId),
        JSON.stringify(query),
      ).toStrictEqual(['new']);
    }
    const hard = await mailwarden.suppressions.list('acme', { reason: 'hard_bounce', from: since });
    expect(hard.items.map((item) => item.email)).toStrictEqual(['jane@example.com']);
  } finally {
    await drop();
  }
});
