// Issue 25 in process: the soft-bounce rule as one line of configuration, suppressions that expire, the
// allowlist, and answers unchanged when none of them is configured (docs/core.md, "Rules").
import { createMailwarden, createMemoryStore, type DeliveryEvent, type MailwardenOptions, type SuppressedNotice } from '@mailwarden/core';
import { createCheckCache } from '@mailwarden/core/store';
import { describe, expect, test } from 'vitest';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 9);

/** A clock the test moves by hand. */
function manualClock(start = T0 + 10 * DAY) {
  const clock = { now: start, read: () => clock.now };
  return clock;
}

function softBounce(n: number, at: number, overrides: Partial<DeliveryEvent> = {}): DeliveryEvent {
  return {
    provider: 'postmark',
    eventKey: `soft-${n}`,
    type: 'bounced',
    bounceClass: 'soft',
    messageId: `m-${n}`,
    recipient: 'Full@Example.com',
    trackingId: null,
    occurredAt: new Date(at),
    details: { diagnostic: `452 4.2.2 mailbox full (${n})` },
    ...overrides,
  };
}

function mailwardenWith(options: MailwardenOptions = {}) {
  const clock = manualClock();
  const suppressed: SuppressedNotice[] = [];
  const mailwarden = createMailwarden({
    rules: { softBounces: { bounces: 3, days: 7 } },
    now: clock.read,
    on: { suppressed: (notice) => void suppressed.push(notice) },
    ...options,
  });
  return { mailwarden, clock, suppressed };
}

describe('the soft-bounce rule, configured in one line', () => {
  test('3 soft bounces of distinct messages within 7 days suppress, with the rule and its bounces as provenance', async () => {
    const { mailwarden, suppressed } = mailwardenWith();
    await mailwarden.applyEvents('acme', [softBounce(1, T0), softBounce(2, T0 + DAY)]);
    expect(await mailwarden.suppressions.check('acme', 'full@example.com')).toEqual({ email: 'full@example.com', suppressed: false });

    await mailwarden.applyEvents('acme', [softBounce(3, T0 + 6 * DAY)]);
    const check = await mailwarden.suppressions.check('acme', 'full@example.com');
    expect(check).toMatchObject({
      suppressed: true,
      reason: 'hard_bounce',
      created_at: new Date(T0 + 6 * DAY).toISOString(),
      source: 'webhook',
      cause: { provider: 'postmark', message_id: 'm-3', diagnostic: '452 4.2.2 mailbox full (3)' },
      // The rule's suppressions expire after 30 days unless configured otherwise.
      expires_at: new Date(T0 + 36 * DAY).toISOString(),
      rule: { bounces: 3, days: 7, reset_on_delivery: false },
    });
    if (!check.suppressed) throw new Error('unreachable');
    expect(check.rule!.events.map((bounce) => [bounce.message_id, bounce.event_at])).toEqual([
      ['m-1', new Date(T0).toISOString()],
      ['m-2', new Date(T0 + DAY).toISOString()],
      ['m-3', new Date(T0 + 6 * DAY).toISOString()],
    ]);
    const [listed] = (await mailwarden.suppressions.list('acme')).items;
    expect(listed).toMatchObject({ reason: 'hard_bounce', expires_at: check.expires_at, rule: check.rule });

    // The hook fires once, with the rule's record read back.
    await mailwarden.hooksSettled();
    expect(suppressed).toHaveLength(1);
    expect(suppressed[0]).toMatchObject({
      email: 'full@example.com',
      reason: 'hard_bounce',
      previousReason: null,
      source: 'webhook',
      at: new Date(T0 + 6 * DAY),
      cause: { provider: 'postmark', messageId: 'm-3' },
      expiresAt: new Date(T0 + 36 * DAY),
      rule: { bounces: 3, days: 7, resetOnDelivery: false },
    });
    expect(suppressed[0]!.rule!.events.map((bounce) => bounce.at)).toEqual([new Date(T0), new Date(T0 + DAY), new Date(T0 + 6 * DAY)]);

    // Retried, the events are duplicates: no second call.
    await mailwarden.applyEvents('acme', [softBounce(1, T0), softBounce(2, T0 + DAY), softBounce(3, T0 + 6 * DAY)]);
    await mailwarden.hooksSettled();
    expect(suppressed).toHaveLength(1);
  });

  test('a check cache drops its answer for the address a soft bounce suppressed', async () => {
    const store = await createCheckCache({ store: createMemoryStore(), now: () => 0, negativeTtlMs: 60_000 });
    const { mailwarden } = mailwardenWith({ store });
    await mailwarden.applyEvents('acme', [softBounce(1, T0), softBounce(2, T0 + DAY)]);
    expect((await mailwarden.suppressions.check('acme', 'full@example.com')).suppressed).toBe(false);
    await mailwarden.applyEvents('acme', [softBounce(3, T0 + 2 * DAY)]);
    expect((await mailwarden.suppressions.check('acme', 'full@example.com')).suppressed).toBe(true);
    await mailwarden.close();
  });

  test('2 soft bounces do not suppress; nor do 3 spread over more than 7 days', async () => {
    const { mailwarden, suppressed } = mailwardenWith();
    await mailwarden.applyEvents('acme', [softBounce(1, T0), softBounce(2, T0 + 7 * DAY + 1)]);
    await mailwarden.applyEvents('acme', [softBounce(3, T0 + 14 * DAY + 2)]);
    expect((await mailwarden.suppressions.check('acme', 'full@example.com')).suppressed).toBe(false);
    await mailwarden.hooksSettled();
    expect(suppressed).toEqual([]);
  });

  test('bounces of one message count once, however many the provider sends', async () => {
    const { mailwarden } = mailwardenWith();
    await mailwarden.applyEvents('acme', [
      softBounce(1, T0),
      softBounce(2, T0 + 1000, { messageId: 'm-1' }),
      softBounce(3, T0 + 2000, { messageId: 'm-1' }),
      softBounce(4, T0 + 3000, { messageId: 'm-2' }),
    ]);
    expect((await mailwarden.suppressions.check('acme', 'full@example.com')).suppressed).toBe(false);
    await mailwarden.applyEvents('acme', [softBounce(5, T0 + 4000, { messageId: 'm-3' })]);
    expect((await mailwarden.suppressions.check('acme', 'full@example.com')).suppressed).toBe(true);
  });

  test('with resetOnDelivery, a delivery between the bounces resets the count', async () => {
    const { mailwarden } = mailwardenWith({ rules: { softBounces: { bounces: 2, days: 7, resetOnDelivery: true } } });
    const delivered: DeliveryEvent = { ...softBounce(9, T0 + DAY), eventKey: 'delivered-9', type: 'delivered', bounceClass: null };
    await mailwarden.applyEvents('acme', [softBounce(1, T0), delivered, softBounce(2, T0 + 2 * DAY)]);
    expect((await mailwarden.suppressions.check('acme', 'full@example.com')).suppressed).toBe(false);
    await mailwarden.applyEvents('acme', [softBounce(3, T0 + 3 * DAY)]);
    const check = await mailwarden.suppressions.check('acme', 'full@example.com');
    expect(check).toMatchObject({ suppressed: true, rule: { bounces: 2, reset_on_delivery: true } });
  });

  test('rules a lookup gives are checked when used; a map of projects is refused at creation', async () => {
    expect(() => createMailwarden({ rules: { acme: { softBounces: { bounces: 3, days: 7 } } } as never })).toThrow(
      /rules\.acme is not a rule/,
    );
    // A typo inside a rule, or a rule that is not an object, is named too (not ignored, not a TypeError).
    expect(() => createMailwarden({ rules: { softBounces: { bounces: 3, days: 7, resetOnDeliveries: true } } as never })).toThrow(
      /rules\.softBounces\.resetOnDeliveries is not a field/,
    );
    expect(() => createMailwarden({ rules: { softBounces: null } as never })).toThrow(/rules\.softBounces must be an object/);
    expect(() => createMailwarden({ rules: { expireAfterDays: null } as never })).toThrow(/rules\.expireAfterDays must be an object/);
    const mailwarden = createMailwarden({
      rules: (projectId) => (projectId === 'bad' ? { softBounces: { bounces: 0, days: 7 } } : undefined),
    });
    await mailwarden.applyEvents('acme', [softBounce(1, T0)]);
    await expect(mailwarden.applyEvents('bad', [softBounce(1, T0)])).rejects.toThrow(/softBounces\.bounces must be an integer/);
  });

  test('expiry rules by kind: a hard bounce expires after the configured days', async () => {
    const clock = manualClock();
    const mailwarden = createMailwarden({ rules: { expireAfterDays: { hardBounce: 365 } }, now: clock.read });
    await mailwarden.applyEvents('acme', [softBounce(1, T0, { bounceClass: 'hard' })]);
    expect(await mailwarden.suppressions.check('acme', 'full@example.com')).toMatchObject({
      reason: 'hard_bounce',
      expires_at: new Date(T0 + 365 * DAY).toISOString(),
    });
    // A manual add has no expiry configured: it never expires.
    const { suppression } = await mailwarden.suppressions.add('acme', 'kept@example.com');
    expect(suppression.expires_at).toBeUndefined();
  });
});

describe('suppressions that expire', () => {
  test('ttl and expires_at on add; both, or a time not after now, are refused', async () => {
    const clock = manualClock();
    const mailwarden = createMailwarden({ now: clock.read });
    const { suppression } = await mailwarden.suppressions.add('acme', 'a@example.com', { ttl: 60 });
    expect(suppression.expires_at).toBe(new Date(clock.now + 60_000).toISOString());
    const at = new Date(clock.now + DAY);
    const added = await mailwarden.suppressions.add('acme', 'b@example.com', { expiresAt: at });
    expect(added.suppression.expires_at).toBe(at.toISOString());
    expect((await mailwarden.suppressions.add('acme', 'c@example.com', { expiresAt: at.toISOString() })).suppression.expires_at).toBe(
      at.toISOString(),
    );

    await expectMailwardenError(() => mailwarden.suppressions.add('acme', 'd@example.com', { ttl: 60, expiresAt: at }), 'invalid_request');
    await expectMailwardenError(
      () => mailwarden.suppressions.add('acme', 'd@example.com', { expiresAt: new Date(clock.now) }),
      'invalid_request',
    );
    await expectMailwardenError(() => mailwarden.suppressions.add('acme', 'd@example.com', { ttl: 0 }), 'invalid_request');
    await expectMailwardenError(() => mailwarden.suppressions.add('acme', 'd@example.com', { ttl: 1.5 }), 'invalid_request');
    await expectMailwardenError(() => mailwarden.suppressions.add('acme', 'd@example.com', { expiresAt: 'tomorrow' }), 'invalid_request');
    // Times as requests give them (the listings' rule): no space for the T, no offset-less date-time.
    await expectMailwardenError(
      () => mailwarden.suppressions.add('acme', 'd@example.com', { expiresAt: '2099-01-01 10:00:00Z' }),
      'invalid_request',
    );
    await expectMailwardenError(
      () => mailwarden.suppressions.add('acme', 'd@example.com', { expiresAt: '2099-01-01T10:00:00' }),
      'invalid_request',
    );
    const byDate = await mailwarden.suppressions.add('acme', 'e@example.com', { expiresAt: '2099-01-01' });
    expect(byDate.suppression.expires_at).toBe('2099-01-01T00:00:00.000Z');
    expect((await mailwarden.suppressions.check('acme', 'd@example.com')).suppressed).toBe(false);
  });

  test('bulk add: each item its own expiry; a bad one is reported, the others applied', async () => {
    const clock = manualClock();
    const mailwarden = createMailwarden({ now: clock.read });
    const { results } = await mailwarden.suppressions.addMany('acme', [
      { email: 'a@example.com', ttl: 3600 },
      { email: 'b@example.com', ttl: 3600, expires_at: '2030-01-01T00:00:00Z' },
      { email: 'c@example.com', expires_at: '2020-01-01T00:00:00Z' },
      { email: 'd@example.com' },
    ]);
    expect(results.map((result) => result.status)).toEqual(['created', 'invalid', 'invalid', 'created']);
    const { items } = await mailwarden.suppressions.list('acme', { expiring: true });
    expect(items.map((item) => [item.email, item.expires_at])).toEqual([['a@example.com', new Date(clock.now + 3_600_000).toISOString()]]);
    expect((await mailwarden.suppressions.list('acme', { expiring: false })).items.map((item) => item.email)).toEqual(['d@example.com']);
  });

  test('a check flips at exactly expires_at, through a check cache too; then it is gone from listings and removal', async () => {
    const clock = manualClock();
    // The cache's own clock stands still: its TTLs never end during the test.
    const store = await createCheckCache({ store: createMemoryStore(), now: () => 0 });
    const mailwarden = createMailwarden({ store, now: clock.read });
    const expiresAt = clock.now + 1000;
    const { suppression } = await mailwarden.suppressions.add('acme', 'a@example.com', { expiresAt: new Date(expiresAt) });

    clock.now = expiresAt - 1;
    expect(await mailwarden.suppressions.check('acme', 'a@example.com')).toMatchObject({ suppressed: true });
    expect((await mailwarden.filterSuppressed('acme', ['a@example.com'])).allowed).toEqual([]);
    expect((await mailwarden.suppressions.checkMany('acme', ['a@example.com'])).results).toEqual([
      { email: 'a@example.com', suppressed: true, reason: 'manual', expires_at: new Date(expiresAt).toISOString() },
    ]);

    // The cache's own TTL has not passed (its clock stands still), yet the cached record is no answer.
    clock.now = expiresAt;
    expect(await mailwarden.suppressions.check('acme', 'a@example.com')).toEqual({ email: 'a@example.com', suppressed: false });
    expect((await mailwarden.filterSuppressed('acme', ['a@example.com'])).allowed).toEqual(['a@example.com']);
    expect((await mailwarden.suppressions.checkMany('acme', ['a@example.com'])).results).toEqual([
      { email: 'a@example.com', suppressed: false },
    ]);
    expect((await mailwarden.suppressions.list('acme')).items).toEqual([]);
    await expectMailwardenError(() => mailwarden.suppressions.remove('acme', suppression.hash), 'suppression_not_found');

    // An event after expiry suppresses the address again.
    await mailwarden.applyEvents('acme', [softBounce(1, expiresAt + 5, { recipient: 'a@example.com', bounceClass: 'hard' })]);
    expect(await mailwarden.suppressions.check('acme', 'a@example.com')).toMatchObject({ suppressed: true, reason: 'hard_bounce' });
    expect((await mailwarden.suppressions.check('acme', 'a@example.com')) as object).not.toHaveProperty('expires_at');
    await mailwarden.close();
  });

  test('an add over an expired suppression creates it afresh', async () => {
    const clock = manualClock();
    const mailwarden = createMailwarden({ now: clock.read });
    await mailwarden.suppressions.add('acme', 'a@example.com', { ttl: 1 });
    clock.now += 1000;
    const again = await mailwarden.suppressions.add('acme', 'a@example.com');
    expect(again.created).toBe(true);
    expect(again.suppression).toEqual({
      hash: again.suppression.hash,
      email: 'a@example.com',
      reason: 'manual',
      created_at: new Date(clock.now).toISOString(),
      source: 'api',
      cause: null,
    });
  });
});

describe('the allowlist', () => {
  test('list, add and remove addresses and domains, normalized; an absent entry is allowlist_entry_not_found', async () => {
    const clock = manualClock();
    const mailwarden = createMailwarden({ now: clock.read });
    expect(await mailwarden.allowlist.add('acme', ' Seed@Example.COM ')).toEqual({
      entry: { entry: 'seed@example.com', kind: 'address', created_at: new Date(clock.now).toISOString() },
      created: true,
    });
    clock.now += 1;
    const again = await mailwarden.allowlist.add('acme', 'seed@example.com');
    expect(again).toEqual({
      entry: { entry: 'seed@example.com', kind: 'address', created_at: new Date(clock.now - 1).toISOString() },
      created: false,
    });
    expect((await mailwarden.allowlist.add('acme', '@Bücher.Example')).entry.entry).toBe('@xn--bcher-kva.example');
    await mailwarden.allowlist.add('acme', '@a.example');

    const first = await mailwarden.allowlist.list('acme', { limit: 2 });
    expect(first.items.map((item) => [item.entry, item.kind])).toEqual([
      ['@a.example', 'domain'],
      ['@xn--bcher-kva.example', 'domain'],
    ]);
    const second = await mailwarden.allowlist.list('acme', { limit: 2, cursor: first.next_cursor! });
    expect(second).toMatchObject({ items: [{ entry: 'seed@example.com' }], next_cursor: null, count: 1 });
    // Another project's allowlist is its own.
    expect((await mailwarden.allowlist.list('other')).items).toEqual([]);

    for (const bad of ['not an address', '@', '@not a domain', 'a@b@c.example', '']) {
      await expectMailwardenError(() => mailwarden.allowlist.add('acme', bad), 'invalid_email');
    }
    expect(await mailwarden.allowlist.remove('acme', '@BÜCHER.example')).toEqual({ deleted: true, entry: '@xn--bcher-kva.example' });
    await expectMailwardenError(() => mailwarden.allowlist.remove('acme', '@bücher.example'), 'allowlist_entry_not_found');
  });

  test('an allowlisted address is recorded but not suppressed by events; adds and imports say it was allowlisted', async () => {
    const { mailwarden, suppressed } = mailwardenWith({ rules: { softBounces: { bounces: 1, days: 1 } } });
    await mailwarden.allowlist.add('acme', 'full@example.com');
    await mailwarden.allowlist.add('acme', '@seeds.example');
    const result = await mailwarden.applyEvents('acme', [
      softBounce(1, T0, { bounceClass: 'hard' }),
      softBounce(2, T0 + 1),
      softBounce(3, T0 + 2, { recipient: 'one@seeds.example', type: 'complained', bounceClass: null }),
    ]);
    expect(result.accepted).toBe(3);
    expect((await mailwarden.suppressions.list('acme')).items).toEqual([]);
    const messages = await mailwarden.messages.list('acme');
    expect(messages.items).toHaveLength(3);

    const { suppression } = await mailwarden.suppressions.add('acme', 'full@example.com');
    expect(suppression).toMatchObject({ source: 'api', allowlisted: true });
    const { results } = await mailwarden.suppressions.addMany(
      'acme',
      [{ email: 'one@seeds.example', reason: 'complaint' }, { email: 'other@example.com' }],
      { source: 'import' },
    );
    expect(results.map((item) => item.status)).toEqual(['created', 'created']);
    expect(await mailwarden.suppressions.check('acme', 'one@seeds.example')).toMatchObject({ source: 'import', allowlisted: true });
    expect(await mailwarden.suppressions.check('acme', 'other@example.com')).not.toHaveProperty('allowlisted');
    await mailwarden.hooksSettled();
    expect(suppressed.map((notice) => [notice.email, notice.allowlisted])).toEqual([
      ['full@example.com', true],
      ['one@seeds.example', true],
      ['other@example.com', undefined],
    ]);
  });
});

describe('with no rule, no expiry and no allowlist', () => {
  test('answers and hook notices are as they were: no new field anywhere', async () => {
    const clock = manualClock();
    const suppressed: SuppressedNotice[] = [];
    const mailwarden = createMailwarden({ now: clock.read, on: { suppressed: (notice) => void suppressed.push(notice) } });
    await mailwarden.applyEvents('acme', [
      softBounce(1, T0, { bounceClass: 'hard' }),
      softBounce(2, T0),
      softBounce(3, T0),
      softBounce(4, T0),
    ]);
    const { suppression } = await mailwarden.suppressions.add('acme', 'added@example.com');
    expect(suppression).toEqual({
      hash: suppression.hash,
      email: 'added@example.com',
      reason: 'manual',
      created_at: new Date(clock.now).toISOString(),
      source: 'api',
      cause: null,
    });
    const check = await mailwarden.suppressions.check('acme', 'full@example.com');
    expect(Object.keys(check)).toEqual(['email', 'suppressed', 'reason', 'created_at', 'source', 'cause']);
    expect(Object.keys((await mailwarden.suppressions.list('acme')).items[1]!)).toEqual([
      'hash',
      'email',
      'reason',
      'created_at',
      'source',
      'cause',
    ]);
    await mailwarden.hooksSettled();
    expect(suppressed.map((notice) => Object.keys(notice))).toEqual([
      ['projectId', 'email', 'hash', 'reason', 'previousReason', 'source', 'at', 'cause', 'stream'],
      ['projectId', 'email', 'hash', 'reason', 'previousReason', 'source', 'at', 'cause', 'stream'],
    ]);
  });

  test('the store gets no rule input and no expiry, only the clock', async () => {
    const memory = createMemoryStore();
    const seen: unknown[] = [];
    const store = {
      ...memory,
      applyEvents: (...args: Parameters<typeof memory.applyEvents>) => (seen.push(args), memory.applyEvents(...args)),
    };
    const mailwarden = createMailwarden({ store, now: () => T0 });
    await mailwarden.applyEvents('acme', [softBounce(1, T0, { bounceClass: 'hard' }), softBounce(2, T0)]);
    const [[, events, options]] = seen as [[string, { suppression: object | null; ruleInput?: unknown }[], unknown]];
    expect(events.map((event) => 'ruleInput' in event)).toEqual([false, false]);
    expect(events[0]!.suppression).not.toHaveProperty('expiresAt');
    expect(options).toEqual({ now: T0 });
  });
});
