import { createHash } from 'node:crypto';
import type { Store } from '@mailwarden/core';
import type { WebhookTokenClaim } from '@mailwarden/core/store';
import fc from 'fast-check';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';

/** What `claimWebhookToken` answers. */
type Claim = WebhookTokenClaim;
type ClaimWebhookToken = (projectId: string, token: string, digest: string, expiresAt: number) => Promise<Claim>;

/** Far in the future: no record of these tests may be forgotten while they run. */
const LATER = Date.UTC(2999, 0, 1);

/** A body digest as intake computes it: 64 lower-case hex characters. */
const digestOf = (body: string): string => createHash('sha256').update(body).digest('hex');
const [D1, D2, D3] = [digestOf('body 1'), digestOf('body 2'), digestOf('body 3')] as const;

/** A Mailgun-like token: the provider, ':', 50 hex characters. */
const mailgunToken = (seed: string): string => `mailgun:${createHash('sha256').update(seed).digest('hex').slice(0, 50)}`;

/**
 * The store's `claimWebhookToken`, or a loud failure: every store mailwarden ships implements it, so
 * its absence is a bug unless the store opted out of the group.
 */
function claimOf(store: Store, name: string): ClaimWebhookToken {
  if (typeof store.claimWebhookToken !== 'function') {
    throw new Error(
      `${name} has no claimWebhookToken. Every shipped store implements it; a store that deliberately does not ` +
        '(webhooks then fall back to a per-process memory) must turn this group off with groups: { webhookTokens: false }.',
    );
  }
  return (projectId, token, digest, expiresAt) => store.claimWebhookToken!(projectId, token, digest, expiresAt);
}

export function describeWebhookTokenTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('webhook tokens', () => {
    test('the store implements claimWebhookToken', async ({ store }) => {
      expect(typeof claimOf(store, options.name)).toBe('function');
    });

    test("the first claim is 'first'; later ones are 'same' with its digest and 'conflict' with any other", async ({
      store,
      projectId,
    }) => {
      const claim = claimOf(store, options.name);
      const token = mailgunToken('one');
      expect(await claim(projectId, token, D1, LATER)).toBe('first');
      expect(await claim(projectId, token, D1, LATER)).toBe('same');
      expect(await claim(projectId, token, D1, LATER)).toBe('same');
      expect(await claim(projectId, token, D2, LATER)).toBe('conflict');
      // A conflict records nothing: the first digest stays the one that counts.
      expect(await claim(projectId, token, D2, LATER)).toBe('conflict');
      expect(await claim(projectId, token, D3, LATER)).toBe('conflict');
      expect(await claim(projectId, token, D1, LATER)).toBe('same');
      // Nor does a later claim with another expiry change the record.
      expect(await claim(projectId, token, D1, LATER + 1000)).toBe('same');
      expect(await claim(projectId, token, D2, LATER - 1000)).toBe('conflict');
    });

    test('tokens are compared exactly: ":" and unicode are plain characters, no prefix or normalization matches', async ({
      store,
      projectId,
    }) => {
      const claim = claimOf(store, options.name);
      const tokens = [
        mailgunToken('two'),
        `${mailgunToken('two')}0`,
        mailgunToken('two').slice(0, -1),
        'mailgun',
        'mailgun:',
        ':',
        'a:b:c',
        'a:b',
        'A:B',
        'mailgun:ünïcødé',
        'mailgun:\u00e9', // é precomposed
        'mailgun:e\u0301', // e and a combining acute accent
        '🙂:🙃',
        '送信:トークン',
        `mailgun:${'x'.repeat(500)}`,
      ];
      expect(new Set(tokens).size).toBe(tokens.length);
      for (const token of tokens) expect(await claim(projectId, token, D1, LATER), token).toBe('first');
      for (const token of tokens) {
        expect(await claim(projectId, token, D1, LATER), token).toBe('same');
        expect(await claim(projectId, token, D2, LATER), token).toBe('conflict');
      }
    });

    test('projects are isolated from each other', async ({ store, projectId }) => {
      const claim = claimOf(store, options.name);
      const other = randomProjectId();
      const token = mailgunToken('three');
      expect(await claim(projectId, token, D1, LATER)).toBe('first');
      // The same token in another project is another token, whatever its digest.
      expect(await claim(other, token, D2, LATER)).toBe('first');
      expect(await claim(other, token, D2, LATER)).toBe('same');
      expect(await claim(other, token, D1, LATER)).toBe('conflict');
      expect(await claim(projectId, token, D1, LATER)).toBe('same');
      expect(await claim(projectId, token, D2, LATER)).toBe('conflict');
      expect(await claim(randomProjectId(), token, D1, LATER)).toBe('first');
    });

    test('concurrent claims of one token: exactly one is first, and its digest is the one kept', async ({ store, projectId }) => {
      const claim = claimOf(store, options.name);
      const sameToken = mailgunToken('four');
      const answers = await Promise.all(Array.from({ length: 20 }, () => claim(projectId, sameToken, D1, LATER)));
      expect(answers.filter((answer) => answer === 'first')).toHaveLength(1);
      expect(answers.filter((answer) => answer === 'same')).toHaveLength(19);

      const token = mailgunToken('five');
      const digests = Array.from({ length: 20 }, (_, i) => digestOf(`body ${i}`));
      const racing = await Promise.all(digests.map((digest) => claim(projectId, token, digest, LATER)));
      expect(racing.filter((answer) => answer === 'first')).toHaveLength(1);
      expect(racing.filter((answer) => answer === 'conflict')).toHaveLength(19);
      const winner = digests[racing.indexOf('first')]!;
      expect(await Promise.all(digests.map((digest) => claim(projectId, token, digest, LATER)))).toStrictEqual(
        digests.map((digest) => (digest === winner ? 'same' : 'conflict')),
      );
    });

    test('a claim whose expiry has already passed is answered; the store may forget it at once or keep it', async ({
      store,
      projectId,
    }) => {
      const claim = claimOf(store, options.name);
      for (const expiresAt of [Date.UTC(2025, 0, 1), 1, 0, -1]) {
        const token = mailgunToken(`past ${expiresAt}`);
        expect(await claim(projectId, token, D1, expiresAt)).toBe('first');
        expect(['first', 'same']).toContain(await claim(projectId, token, D1, expiresAt));
        expect(['first', 'conflict']).toContain(await claim(projectId, token, D2, expiresAt));
      }
    });

    options.describe('model', () => {
      // Few distinct tokens and digests, so sequences claim the same token again and again.
      const token = fc.oneof(
        fc.constantFrom(mailgunToken('a'), mailgunToken('b'), 'a:b', 'ünï:cødé', '🙂'),
        fc.string({ unit: fc.constantFrom('a', 'B', ':', 'é', 'e\u0301', '🙂'), minLength: 1, maxLength: 3 }),
      );
      const claimArbitrary = fc.record({ project: fc.constantFrom(0, 1), token, digest: fc.constantFrom(D1, D2, D3) });

      options.test('any sequence of claims gets the answers of a map from token to its first digest', async () => {
        const store = await options.createStore({});
        try {
          const claim = claimOf(store, options.name);
          await fc.assert(
            fc.asyncProperty(fc.array(claimArbitrary, { minLength: 1, maxLength: 40 }), async (claims) => {
              // Projects of this run alone: the store keeps earlier runs' tokens.
              const projects = [randomProjectId(), randomProjectId()];
              const model = createStoreModel();
              for (const [step, { project, token, digest }] of claims.entries()) {
                const projectId = projects[project]!;
                const expected = await model.claimWebhookToken!(projectId, token, digest, LATER);
                const actual = await claim(projectId, token, digest, LATER);
                expect(actual, `claim ${step}: ${JSON.stringify({ project, token, digest })}`).toBe(expected);
              }
            }),
            { numRuns: options.numRuns ?? 50 },
          );
        } finally {
          await store.close();
        }
      });
    });
  });
}
