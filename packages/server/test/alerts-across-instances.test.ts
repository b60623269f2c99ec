// Deliverability alerts across instances (issue 26, "Proven"): three services share one Redis or
// PostgreSQL store and split a stream of webhook events between them, its bounce rate rising past 5 %
// and falling back. The alert window lives in the store, so the feed holds exactly one crossing up and
// one down, whichever instance stored the events that crossed.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postWebhook, webhooksFor, webhookUrl, type TestEvent } from '@mailwarden/core/testing';
import { describe, expect, inject, test } from 'vitest';
import { changeFeedOf, loadConfig, type ServerConfig } from '../src/config.js';
import { startService, type Service } from '../src/service.js';
import { openStore } from '../src/store.js';

const INSTANCES = 3;
const mailgun = { signingKey: 'alerts-across-instances-signing-key' };
const headers = { 'x-api-key': 'acme-key' };

function config(): ServerConfig {
  const file = join(mkdtempSync(join(tmpdir(), 'mailwarden-alerts-')), 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      port: 0,
      logLevel: 'silent',
      dashboard: false,
      metrics: { enabled: false },
      // A window of 100 messages, so a few hundred events cross both ways.
      projects: { acme: { apiKeys: ['acme-key'], webhooks: { mailgun }, alerts: { window: 100, minMessages: 50, bounceRate: 5 } } },
    }),
  );
  return loadConfig({ file, env: {} });
}

/**
 * 100 delivered messages, then 50 of which every 5th hard-bounces (the window's count rises to 10 of
 * 100: up at 5), then 150 delivered (the bounces leave the window: down below 4, 80 % of 5 %).
 * Within each phase the count only moves one way, whatever order the instances store its events in.
 */
function phases(): TestEvent[][] {
  const message = (index: number, bounced: boolean): TestEvent => ({
    type: bounced ? 'bounced' : 'delivered',
    ...(bounced ? { bounceClass: 'hard' as const } : {}),
    recipient: `reader${index}@example.com`,
    messageId: `alert-${index}`,
  });
  return [
    Array.from({ length: 100 }, (_, i) => message(i, false)),
    Array.from({ length: 50 }, (_, i) => message(100 + i, i % 5 === 0)),
    Array.from({ length: 150 }, (_, i) => message(150 + i, false)),
  ];
}

describe('alerts across instances sharing a store', () => {
  test.each(['redis', 'postgres'] as const)(
    '%s: one bounce-rate crossing up and one down in the feed',
    { timeout: 60_000 },
    async (kind) => {
      const env =
        kind === 'redis'
          ? { REDIS_URL: inject('redisUrl'), MAILWARDEN_REDIS_KEY_PREFIX: `alerts-${randomUUID()}:` }
          : { DATABASE_URL: inject('databaseUrl'), MAILWARDEN_PG_SCHEMA: `alerts_${randomUUID().replaceAll('-', '')}` };
      const serverConfig = config();
      const services: Service[] = [];
      try {
        for (let i = 0; i < INSTANCES; i++) {
          const opened = await openStore(env, { changes: changeFeedOf(serverConfig) });
          services.push(await startService(serverConfig, opened));
        }
        for (const phase of phases()) {
          // Each instance posts its share of the phase, one request after another; the three at once.
          await Promise.all(
            services.map(async (service, instance) => {
              const mine = phase.filter((_, index) => index % INSTANCES === instance);
              for (const request of webhooksFor('mailgun', mailgun, mine)) {
                const response = await postWebhook(webhookUrl(service.url, 'acme', 'mailgun'), request);
                expect(response.status, await response.text()).toBe(200);
              }
            }),
          );
        }

        const page = await fetch(`${services[0]!.url}/projects/acme/changes?kind=alert&limit=1000`, { headers });
        expect(page.status).toBe(200);
        const { items } = (await page.json()) as { items: { kind: string; alert: { firing: boolean; count: number; messages: number } }[] };
        expect(items.map(({ kind, alert }) => [kind, alert.firing])).toStrictEqual([
          ['alert.bounce_rate', true],
          ['alert.bounce_rate', false],
        ]);
        expect(items[0]!.alert).toMatchObject({ messages: 100, count: 5 });
        expect(items[1]!.alert).toMatchObject({ messages: 100, count: 3 });
        // Every instance reads the same window: 0 bounces of the last 100 messages, the alert down.
        for (const service of services) {
          const status = await (await fetch(`${service.url}/projects/acme/alerts`, { headers })).json();
          expect(status).toMatchObject({ messages: 100, bounce: { count: 0, firing: false } });
        }
      } finally {
        await Promise.all(services.map((service) => service.close()));
      }
    },
  );
});
