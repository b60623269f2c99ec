import { compareCodePoints, createEmailHasher, type AllowlistEntry, type SuppressionRecord } from '@mailwarden/core/store';
import fc from 'fast-check';
import { commutingRuleStep, ruleAddressPool, ruleConfig, RULE_HOURS } from './arbitraries.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { walkPages } from './pages.js';
import {
  addresses,
  at,
  HOUR,
  message,
  messageIdentities,
  softBounce,
  softBounceRule,
  suppression,
  suppressingEvent,
  T0,
} from './records.js';
import { ruleAllowlist, ruleCalls, storedRule } from './rule-steps.js';

const hashEmail = createEmailHasher();

/** An entry as the service makes it: an address by its hash, a domain by `@` and itself. */
function entry(text: string, createdAt = T0): AllowlistEntry {
  return { key: text.startsWith('@') ? text : hashEmail(text), entry: text, createdAt };
}

export function describeAllowlistTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('the allowlist', () => {
    test('entries list in code-point order of entry, page by page strictly after the last', async ({ store, projectId }) => {
      // '@' sorts before letters, 'é' after 'e', U+FFFD before an astral character (not so in UTF-16 order).
      const texts = [
        'zoë@example.com',
        '@example.co',
        'a😀@example.com',
        'ana@example.com',
        '@éxample.com',
        'a\uFFFD@example.com',
        '@example.com',
        'ab@example.com',
      ];
      for (const [index, text] of texts.entries()) await store.addAllowlistEntry(projectId, entry(text, at(index)));
      const sorted = texts.map((text, index) => entry(text, at(index))).sort((a, b) => compareCodePoints(a.entry, b.entry));
      expect(sorted.map((item) => item.entry)).toStrictEqual([
        '@example.co',
        '@example.com',
        '@éxample.com',
        'ab@example.com',
        'ana@example.com',
        'a\uFFFD@example.com',
        'a😀@example.com',
        'zoë@example.com',
      ]);
      expect(await store.listAllowlist(projectId, { limit: 100 })).toStrictEqual(sorted);
      const pages = await walkPages<AllowlistEntry, string>(
        2,
        (after) => store.listAllowlist(projectId, after === undefined ? { limit: 2 } : { limit: 2, after }),
        (item) => item.entry,
      );
      expect(pages.flat()).toStrictEqual(sorted);
      expect(await store.listAllowlist(projectId, { limit: 10, after: '@example.com' })).toStrictEqual(sorted.slice(2));
      expect(await store.listAllowlist(projectId, { limit: 10, after: 'b' })).toStrictEqual(sorted.slice(7));
    });

    test('adding is idempotent by key, removing answers the entry once', async ({ store, projectId }) => {
      const first = entry('ana@example.com', at(1));
      expect(await store.addAllowlistEntry(projectId, first)).toStrictEqual({ entry: first, created: true });
      expect(await store.addAllowlistEntry(projectId, { ...first, createdAt: at(2) })).toStrictEqual({ entry: first, created: false });
      expect(await store.listAllowlist(projectId, { limit: 10 })).toStrictEqual([first]);
      expect(await store.removeAllowlistEntry(projectId, first.key)).toStrictEqual(first);
      expect(await store.removeAllowlistEntry(projectId, first.key)).toBeUndefined();
      expect(await store.listAllowlist(projectId, { limit: 10 })).toStrictEqual([]);
      const other = entry('@example.com');
      expect(await store.addAllowlistEntry(projectId, other)).toStrictEqual({ entry: other, created: true });
      expect(await store.listAllowlist(`${projectId}-other`, { limit: 10 })).toStrictEqual([]);
    });

    test('findAllowlisted matches the address’s hash, or its exact domain after the last @', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      await store.addAllowlistEntry(projectId, { key: a.hash, entry: a.email, createdAt: T0 });
      await store.addAllowlistEntry(projectId, entry('@example.org'));
      const recipients = [a, b, 'x@example.org', 'x@sub.example.org', 'x@example.org.uk', '"a@b"@example.org', 'x@example.com'].map(
        (item) => (typeof item === 'string' ? { email: item, hash: hashEmail(item) } : item),
      );
      expect(await store.findAllowlisted(projectId, recipients)).toStrictEqual([true, false, true, false, false, true, false]);
      expect(await store.findAllowlisted(projectId, [])).toStrictEqual([]);
    });

    test('an allowlisted recipient gets no suppression from an event, nor from the rule; its events are recorded', async ({
      store,
      projectId,
    }) => {
      const [identity] = messageIdentities(1);
      const recipient = { email: identity.recipient, hash: hashEmail(identity.recipient) };
      const [other] = addresses(1);
      await store.addAllowlistEntry(projectId, entry(`@${identity.recipient.split('@')[1]}`));
      const options = { now: at(20), softBounces: softBounceRule(1, 1) };
      const bounce = { ...suppressingEvent(recipient, 'hard_bounce', at(1)), message: message(identity, 4, at(1)) };
      const complaint = suppressingEvent(recipient, 'complaint', at(2));
      const softly = softBounce(recipient, at(3), 'm1');
      expect(await store.applyEvents(projectId, [bounce, complaint, softly, softBounce(other, at(3), 'm1')], options)).toStrictEqual([
        'applied',
        'applied',
        'applied',
        'suppressed',
      ]);
      expect(await store.getSuppression(projectId, recipient.hash, undefined, at(20))).toBeUndefined();
      expect((await store.getMessage(projectId, identity.key))?.key).toBe(identity.key);
      // The recipient asked: an unsubscribe is written all the same, and so is an operator's add.
      const unsubscribe = suppressingEvent(recipient, 'manual', at(4), { source: 'unsubscribe', stream: 'marketing' });
      expect(await store.applyEvents(projectId, [unsubscribe], options)).toStrictEqual(['suppressed']);
      const added: SuppressionRecord = {
        ...suppression(recipient, 'manual', at(5)),
        provenance: { source: 'api', at: at(5), allowlisted: true },
      };
      expect(await store.addSuppression(projectId, added, at(5))).toStrictEqual({ record: added, created: true });
      expect(await store.listSuppressions(projectId, { limit: 10, now: at(20) })).toStrictEqual([
        added,
        expect.objectContaining({ hash: other.hash, reason: 'hard_bounce' }),
      ]);
      expect(await store.getSuppression(projectId, recipient.hash, 'marketing', at(20))).toStrictEqual(added);
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'marketing' })).toStrictEqual([unsubscribe.suppression]);
    });

    test('bounces while allowlisted are not counted once the entry is removed; events after it are', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const allowed = { key: a.hash, entry: a.email, createdAt: T0 };
      const options = { now: T0 + 30 * HOUR, softBounces: softBounceRule(2, 1) };
      await store.addAllowlistEntry(projectId, allowed);
      expect(await store.applyEvents(projectId, [softBounce(a, T0, 'm1')], options)).toStrictEqual(['applied']);
      await store.removeAllowlistEntry(projectId, a.hash);
      expect(await store.applyEvents(projectId, [softBounce(a, T0 + HOUR, 'm2')], options)).toStrictEqual(['applied']);
      expect(await store.applyEvents(projectId, [softBounce(a, T0 + 2 * HOUR, 'm3')], options)).toStrictEqual(['suppressed']);
    });

    // The law of the allowlist: whatever the rule and the events, only the recipient or an operator suppresses an allowlisted address.
    test('whatever the rule and the events, allowlisted addresses get no suppression from events', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(ruleConfig, fc.array(commutingRuleStep(4), { minLength: 4, maxLength: 16 }), async (config, steps) => {
          const projectId = randomProjectId();
          // The first address by its hash, the second by its domain; the third is not allowlisted.
          await store.addAllowlistEntry(projectId, ruleAllowlist[0]!);
          await store.addAllowlistEntry(projectId, ruleAllowlist[3]!);
          const now = T0 + RULE_HOURS * HOUR;
          for (const call of ruleCalls(steps, [], storedRule(config), now)) await call.run(store, projectId);
          const allowed = new Set([ruleAddressPool[0]!.hash, ruleAddressPool[1]!.hash]);
          for (const stream of [undefined, 'marketing']) {
            const records = await store.listSuppressions(projectId, stream === undefined ? { limit: 100 } : { limit: 100, stream });
            for (const record of records.filter((item) => allowed.has(item.hash))) expect(record.provenance?.source).not.toBe('webhook');
          }
        }),
        { numRuns: Math.ceil((options.numRuns ?? 50) / 5) },
      );
    });
  });
}
