import { randomBytes } from 'node:crypto';
import type { DeliveryEvent, Mailwarden } from '@mailwarden/core';
import type { ServerConfig } from './config.js';

export const DEMO_PROJECT = 'demo';

/** The configuration with a `demo` project and a fresh random API key for it. */
export function withDemoProject(config: ServerConfig): { config: ServerConfig; apiKey: string } {
  const apiKey = `mw_demo_${randomBytes(12).toString('hex')}`;
  const existing = config.projects[DEMO_PROJECT];
  return {
    apiKey,
    config: { ...config, projects: { ...config.projects, [DEMO_PROJECT]: { ...existing, apiKeys: [...(existing?.apiKeys ?? []), apiKey] } } },
  };
}

/** A little data to look at: one campaign's delivery events, including a hard bounce, and a manual suppression. */
export async function seedDemo(mailwarden: Mailwarden): Promise<void> {
  const trackingId = 'welcome-2026-11';
  const at = Date.now() - 60_000;
  const event = (type: DeliveryEvent['type'], recipient: string, offset: number, extra: Partial<DeliveryEvent> = {}): DeliveryEvent => ({
    provider: 'sendgrid',
    type,
    messageId: `demo-${recipient.split('@')[0]}`,
    recipient,
    trackingId,
    occurredAt: new Date(at + offset * 1000),
    eventKey: `demo-${type}-${recipient}`,
    ...extra,
  });
  await mailwarden.applyEvents(DEMO_PROJECT, [
    event('delivered', 'alice@example.com', 1),
    event('opened', 'alice@example.com', 20),
    event('delivered', 'carol@example.com', 2),
    event('bounced', 'bounced@example.com', 3, { bounceClass: 'hard' }),
  ]);
  await mailwarden.suppressions.add(DEMO_PROJECT, 'opted-out@example.com');
}

/** What `serve --demo` prints: where the API is, the key, and commands that work when pasted. */
export function demoBanner(url: string, apiKey: string, store: string): string {
  const base = `${url}/projects/${DEMO_PROJECT}`;
  return [
    '',
    `mailwarden is listening on ${url} (${store} store)`,
    `  demo project: ${DEMO_PROJECT}`,
    `  demo API key: ${apiKey}`,
    '',
    'Try:',
    `  curl -s '${base}/suppressions/check?email=bounced@example.com' -H 'X-API-Key: ${apiKey}'`,
    `  curl -s -X POST '${base}/suppressions' -H 'X-API-Key: ${apiKey}' -H 'Content-Type: application/json' -d '{"email":"someone@example.com"}'`,
    `  curl -s '${base}/messages?trackingId=welcome-2026-11' -H 'X-API-Key: ${apiKey}'`,
    `  curl -s '${url}/openapi.json'`,
    '',
    'Stop with Ctrl-C.',
    '',
  ].join('\n');
}
