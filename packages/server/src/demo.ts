import { randomBytes } from 'node:crypto';
import type { DeliveryEvent, Mailwarden, Provider, ProviderAuth } from '@mailwarden/core';
import type { ServerConfig } from './config.js';

export const DEMO_PROJECT = 'demo';

/**
 * The demo project's webhook secrets, for all six providers. They are public (they are in this file), so
 * `mailwarden webhooks send <provider>` can sign for the demo with no flags: never give them to a real
 * project. SES is signed with the testing kit's SNS key, which the demo service trusts.
 */
export const demoWebhookAuth = {
  ses: { topicArns: ['arn:aws:sns:us-east-1:123456789012:mailwarden-demo'] },
  sendgrid: { publicKey: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEBhZsXI7Fbca/1wz1x1SbAOGybMEQBNzqahoNALflHSqyZaSs9Y7i/OT7bcwiNcQYdzShqVgbAzAmGD+9Pw0Zvw==' },
  mailgun: { signingKey: 'mailwarden-demo-mailgun-signing-key' },
  sparkpost: { basic: [{ username: 'sparkpost', password: 'mailwarden-demo' }] },
  postmark: { basic: [{ username: 'postmark', password: 'mailwarden-demo' }] },
  // Mandrill signs the URL as entered at Mandrill, not the one the service sees: any fixed URL will do.
  mandrill: { webhookKey: 'mailwarden-demo-mandrill-key', url: 'http://127.0.0.1:3000/projects/demo/webhooks/mandrill' },
} satisfies Required<ProviderAuth>;

/** The private half of the demo's SendGrid key (SendGrid keeps it in real life; the demo is its own SendGrid). */
export const demoSendGridPrivateKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgL4fKtNQmOsxXS6Oe
H8jc8eNLt/7TVLl4vMxJdGoLSH6hRANCAAQGFmxcjsVtxr/XDPXHVJsA4bJswRAE
3OpqGg0At+UdKrJlpKz1juL85PttzCI1xBh3NKGpWBsDMCYYP70/DRm/
-----END PRIVATE KEY-----
`;

/**
 * The configuration with a `demo` project: a fresh random API key, the demo webhook secrets (unless the
 * configuration gives the project its own), and the testing kit's SNS certificate trusted.
 */
export function withDemoProject(config: ServerConfig): { config: ServerConfig; apiKey: string } {
  const apiKey = `mw_demo_${randomBytes(12).toString('hex')}`;
  const existing = config.projects[DEMO_PROJECT];
  const demo = { ...existing, apiKeys: [...(existing?.apiKeys ?? []), apiKey], webhooks: existing?.webhooks ?? demoWebhookAuth };
  return {
    apiKey,
    config: { ...config, unsafeTrustTestSnsCertificate: true, projects: { ...config.projects, [DEMO_PROJECT]: demo } },
  };
}

/** The campaigns of the demo: a tracking ID, how many messages, the provider, and how they fare. */
const campaigns = [
  { trackingId: 'welcome-2026-11', messages: 60, provider: 'sendgrid', hardBounce: 0.05, softBounce: 0.03, complaint: 0, daysAgo: 6 },
  { trackingId: 'newsletter-2026-11-13', messages: 120, provider: 'ses', hardBounce: 0.02, softBounce: 0.04, complaint: 0.02, daysAgo: 10 },
  { trackingId: 'newsletter-2026-11-20', messages: 140, provider: 'ses', hardBounce: 0.02, softBounce: 0.03, complaint: 0.015, daysAgo: 3 },
  { trackingId: 'password-reset', messages: 45, provider: 'postmark', hardBounce: 0.02, softBounce: 0.02, complaint: 0, daysAgo: 7 },
  { trackingId: 'order-confirmation', messages: 80, provider: 'mailgun', hardBounce: 0.01, softBounce: 0.05, complaint: 0, daysAgo: 7 },
  { trackingId: 'black-friday-2026', messages: 90, provider: 'sparkpost', hardBounce: 0.04, softBounce: 0.06, complaint: 0.03, daysAgo: 1 },
] as const satisfies readonly { trackingId: string; provider: Provider; messages: number; hardBounce: number; softBounce: number; complaint: number; daysAgo: number }[];

const names = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'mallory', 'niaj', 'olivia', 'peggy', 'rupert', 'sybil', 'trent', 'victor', 'walter', 'yasmin'];
const domains = ['example.com', 'example.org', 'example.net', 'mail.example.com'];
const HOUR = 60 * 60 * 1000;

/**
 * Data that looks like real use, the same on every start: six campaigns with 535 messages from five
 * providers, delivered, opened, deferred, soft- and hard-bounced and complained, the hard bounces and
 * complaints suppressed automatically, a few messages without a tracking ID, and manual suppressions.
 */
export async function seedDemo(mailwarden: Mailwarden, now = Date.now()): Promise<void> {
  const random = seededRandom(20261123);
  const events: DeliveryEvent[] = [];
  const add = (event: Omit<DeliveryEvent, 'eventKey'>) => events.push({ ...event, eventKey: `demo-${events.length}` });
  for (const campaign of campaigns) {
    const sentAt = now - campaign.daysAgo * 24 * HOUR;
    for (let i = 0; i < campaign.messages; i++) {
      const recipient = `${names[i % names.length]}.${i}@${domains[Math.floor(random() * domains.length)]}`;
      const message = { provider: campaign.provider, messageId: `demo-${campaign.trackingId}-${i}`, recipient, trackingId: campaign.trackingId };
      const at = sentAt + i * 37_000;
      const roll = random();
      if (roll < campaign.hardBounce) {
        add({ ...message, type: 'bounced', bounceClass: 'hard', occurredAt: new Date(at + 20_000), description: '550 5.1.1 The email account that you tried to reach does not exist' });
        continue;
      }
      if (roll < campaign.hardBounce + campaign.softBounce) {
        add({ ...message, type: 'deferred', occurredAt: new Date(at + 30_000) });
        add({ ...message, type: 'bounced', bounceClass: 'soft', occurredAt: new Date(at + 4 * HOUR), description: '452 4.2.2 Mailbox full' });
        continue;
      }
      add({ ...message, type: 'delivered', occurredAt: new Date(at + 15_000) });
      if (random() < 0.45) add({ ...message, type: 'opened', occurredAt: new Date(at + (1 + random() * 20) * HOUR) });
      if (random() < campaign.complaint) add({ ...message, type: 'complained', occurredAt: new Date(at + 22 * HOUR) });
    }
  }
  // The addresses the banner's commands use, and messages sent without a tracking ID.
  const start = now - 2 * 24 * HOUR;
  add({ provider: 'sendgrid', type: 'bounced', bounceClass: 'hard', messageId: 'demo-bounced', recipient: 'bounced@example.com', trackingId: 'welcome-2026-11', occurredAt: new Date(start) });
  for (const [i, name] of ['receipts', 'billing', 'support'].entries()) {
    add({ provider: 'postmark', type: 'delivered', messageId: `demo-untracked-${i}`, recipient: `${name}@example.org`, trackingId: null, occurredAt: new Date(start + i * HOUR) });
  }
  for (let at = 0; at < events.length; at += 500) await mailwarden.applyEvents(DEMO_PROJECT, events.slice(at, at + 500));
  for (const email of ['opted-out@example.com', 'legal-hold@example.org', 'do-not-mail@example.net']) {
    await mailwarden.suppressions.add(DEMO_PROJECT, email);
  }
}

/** A small deterministic generator (mulberry32), so the demo looks the same on every start. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * What `serve --demo` prints: where the API and the dashboard are, the key, and commands that work when
 * pasted. `cli` is how to run the CLI where the service runs (`npx mailwarden`, or `npm run mailwarden --`
 * in the repository).
 */
export function demoBanner(url: string, apiKey: string, store: string, dashboard: boolean, cli = 'npx mailwarden'): string {
  const base = `${url}/projects/${DEMO_PROJECT}`;
  return [
    '',
    `mailwarden is listening on ${url} (${store} store)`,
    `  demo project: ${DEMO_PROJECT}`,
    `  demo API key: ${apiKey}`,
    ...(dashboard ? ['', `Dashboard: ${url}/dashboard/`, `  sign in with project "${DEMO_PROJECT}" and the demo API key`] : []),
    '',
    'Try:',
    `  curl -s '${base}/suppressions/check?email=bounced@example.com' -H 'X-API-Key: ${apiKey}'`,
    `  curl -s -X POST '${base}/suppressions' -H 'X-API-Key: ${apiKey}' -H 'Content-Type: application/json' -d '{"email":"someone@example.com"}'`,
    `  curl -s '${base}/messages?trackingId=welcome-2026-11' -H 'X-API-Key: ${apiKey}'`,
    `  curl -s '${url}/openapi.json'`,
    '',
    'Post a signed test webhook as a provider would (ses, sendgrid, mailgun, sparkpost, postmark or mandrill):',
    `  ${cli} webhooks send sendgrid --url '${url}' --type bounced --to test@example.com`,
    '',
    'Stop with Ctrl-C.',
    '',
  ].join('\n');
}
