import { describe, expect, it } from 'vitest';
import { createMailwarden, createMemoryStore, MailwardenError, type DeliveryEvent, type Store } from '@mailwarden/core';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const T0 = Date.parse('2024-05-01T00:00:00.000Z');

function event(overrides: Partial<DeliveryEvent> & Pick<DeliveryEvent, 'eventKey' | 'recipient' | 'type'>): DeliveryEvent {
  return { provider: 'sendgrid', messageId: null, trackingId: null, occurredAt: new Date(T0), ...overrides };
}

/**
 * Failure injection: a memory store whose `getSuppressions` fails from its `failFrom`-th call on (1-based),
 * as a remote store does when its server goes away. Everything else is the real memory store.
 */
function failingStore(failFrom = 1) {
  const inner = createMemoryStore();
  const failure = new MailwardenError('store_unavailable', 'The store cannot be reached.');
  let calls = 0;
  const store: Store = {
    ...inner,
    async getSuppressions(projectId, hashes) {
      calls++;
      if (calls >= failFrom) throw failure;
      return inner.getSuppressions(projectId, hashes);
    },
  };
  return { store, failure, calls: () => calls };
}

describe('filterSuppressed', () => {
  it('splits recipients into allowed and blocked, in input order, with reasons', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.suppressions.add('acme', 'manual@example.com');
    await mailwarden.applyEvents('acme', [
      event({ eventKey: 'c', recipient: 'complainer@example.com', type: 'complained' }),
      event({ eventKey: 'b', recipient: 'bouncer@example.com', type: 'bounced', bounceClass: 'hard' }),
    ]);
    const recipients = [
      'first@example.com',
      ' Manual@Example.COM ',
      'not an address',
      'bouncer@example.com',
      'second@example.com',
      'complainer@example.com',
      'jane@localhost',
      'third@example.com',
    ];
    const result = await mailwarden.filterSuppressed('acme', recipients);
    expect(result).toStrictEqual({
      allowed: ['first@example.com', 'second@example.com', 'third@example.com'],
      blocked: [
        { email: ' Manual@Example.COM ', reason: 'manual' },
        { email: 'not an address', reason: 'invalid_email' },
        { email: 'bouncer@example.com', reason: 'hard_bounce' },
        { email: 'complainer@example.com', reason: 'complaint' },
        { email: 'jane@localhost', reason: 'invalid_email' },
      ],
    });
    expect('error' in result).toBe(false);
  });

  it('answers an empty recipient list', async () => {
    const mailwarden = createMailwarden();
    expect(await mailwarden.filterSuppressed('acme', [])).toStrictEqual({ allowed: [], blocked: [] });
  });

  it('keeps duplicates, each in its place', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.suppressions.add('acme', 'x@example.com');
    const result = await mailwarden.filterSuppressed('acme', ['x@example.com', 'y@example.com', 'X@example.com', 'y@example.com']);
    expect(result).toStrictEqual({
      allowed: ['y@example.com', 'y@example.com'],
      blocked: [
        { email: 'x@example.com', reason: 'manual' },
        { email: 'X@example.com', reason: 'manual' },
      ],
    });
  });

  it('only sees its own project', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.suppressions.add('acme', 'x@example.com');
    expect((await mailwarden.filterSuppressed('other', ['x@example.com'])).allowed).toEqual(['x@example.com']);
  });

  it('handles more than 1000 recipients', async () => {
    const mailwarden = createMailwarden();
    const recipients = Array.from({ length: 2500 }, (_, i) => `user${i}@example.com`);
    const suppressedAt = [0, 1, 998, 999, 1000, 1001, 1999, 2000, 2001, 2499];
    for (const i of suppressedAt) await mailwarden.suppressions.add('acme', recipients[i]!);
    recipients[1500] = 'invalid';
    const result = await mailwarden.filterSuppressed('acme', recipients);
    expect(result.blocked).toEqual(
      [...suppressedAt, 1500].sort((a, b) => a - b).map((i) => ({ email: recipients[i], reason: i === 1500 ? 'invalid_email' : 'manual' })),
    );
    expect(result.allowed).toEqual(recipients.filter((_, i) => !suppressedAt.includes(i) && i !== 1500));
    expect(result.allowed.length + result.blocked.length).toBe(2500);
  });

  it('uses the hashKey of the instance', async () => {
    const mailwarden = createMailwarden({ hashKey: 'pepper' });
    await mailwarden.suppressions.add('acme', 'x@example.com');
    expect(await mailwarden.filterSuppressed('acme', ['x@example.com', 'y@example.com'])).toStrictEqual({
      allowed: ['y@example.com'],
      blocked: [{ email: 'x@example.com', reason: 'manual' }],
    });
  });

  it('throws invalid_request for an invalid project id', async () => {
    const mailwarden = createMailwarden();
    await expectMailwardenError(() => mailwarden.filterSuppressed('no such project!', ['x@example.com']), 'invalid_request');
  });
});

describe('filterSuppressed when the store fails', () => {
  const recipients = ['a@example.com', 'bad address', 'b@example.com', 'A@example.com'];

  it('fails open by default: allows every valid recipient and reports the error', async () => {
    const { store, failure } = failingStore();
    const mailwarden = createMailwarden({ store });
    const result = await mailwarden.filterSuppressed('acme', recipients);
    expect(result).toStrictEqual({
      allowed: ['a@example.com', 'b@example.com', 'A@example.com'],
      blocked: [{ email: 'bad address', reason: 'invalid_email' }],
      error: failure,
    });
    expect(await mailwarden.filterSuppressed('acme', recipients, { onError: 'open' })).toStrictEqual(result);
  });

  it('fails closed on request: blocks every valid recipient as check_failed and reports the error', async () => {
    const { store, failure } = failingStore();
    const mailwarden = createMailwarden({ store });
    const result = await mailwarden.filterSuppressed('acme', recipients, { onError: 'closed' });
    expect(result).toStrictEqual({
      allowed: [],
      blocked: [
        { email: 'a@example.com', reason: 'check_failed' },
        { email: 'bad address', reason: 'invalid_email' },
        { email: 'b@example.com', reason: 'check_failed' },
        { email: 'A@example.com', reason: 'check_failed' },
      ],
      error: failure,
    });
  });

  it('does not need the store when no recipient is valid', async () => {
    const { store, calls } = failingStore();
    const mailwarden = createMailwarden({ store });
    expect(await mailwarden.filterSuppressed('acme', ['bad', 'worse'], { onError: 'closed' })).toStrictEqual({
      allowed: [],
      blocked: [
        { email: 'bad', reason: 'invalid_email' },
        { email: 'worse', reason: 'invalid_email' },
      ],
    });
    expect(calls()).toBe(0);
  });

  it('failing open part-way through a large send, still blocks what it already found suppressed', async () => {
    // The first store call (the first chunk of recipients) succeeds, a later one fails.
    const { store, failure, calls } = failingStore(2);
    const mailwarden = createMailwarden({ store });
    const recipients = Array.from({ length: 1500 }, (_, i) => `user${i}@example.com`);
    await mailwarden.suppressions.add('acme', 'user3@example.com');
    await mailwarden.suppressions.add('acme', 'user1200@example.com');
    const result = await mailwarden.filterSuppressed('acme', recipients);
    expect(calls()).toBeGreaterThanOrEqual(2);
    expect(result.error).toBe(failure);
    // user3 was checked and found suppressed: mailing it would break the suppression list.
    expect(result.blocked).toEqual([{ email: 'user3@example.com', reason: 'manual' }]);
    // user1200 could not be checked, so fail-open lets it through.
    expect(result.allowed).toEqual(recipients.filter((email) => email !== 'user3@example.com'));
  });

  it('failing closed part-way through a large send, blocks every valid recipient', async () => {
    const { store, failure } = failingStore(2);
    const mailwarden = createMailwarden({ store });
    const recipients = Array.from({ length: 1500 }, (_, i) => `user${i}@example.com`);
    await mailwarden.suppressions.add('acme', 'user3@example.com');
    const result = await mailwarden.filterSuppressed('acme', recipients, { onError: 'closed' });
    expect(result.error).toBe(failure);
    expect(result.allowed).toEqual([]);
    expect(result.blocked.map((entry) => entry.email)).toEqual(recipients);
  });
});
