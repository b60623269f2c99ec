import { readFileSync } from 'node:fs';
import { MailwardenError, providers, type Provider, type ProviderAuth } from '@mailwarden/core';
import { postWebhook, testSnsSigner, webhooksFor, webhookUrl, type TestEvent, type TestEventType, type TestWebhook } from '@mailwarden/core/testing';
import type { ServerConfig } from './config.js';
import { DEMO_PROJECT, demoSendGridPrivateKey, demoWebhookAuth } from './demo.js';

/** `--type` values: mailwarden's event types, `soft-bounced`, and the provider words people type. */
const eventTypes: Record<string, { type: TestEventType; bounceClass?: 'hard' | 'soft' }> = {
  sent: { type: 'sent' },
  delivered: { type: 'delivered' },
  delivery: { type: 'delivered' },
  deferred: { type: 'deferred' },
  bounced: { type: 'bounced', bounceClass: 'hard' },
  bounce: { type: 'bounced', bounceClass: 'hard' },
  'hard-bounce': { type: 'bounced', bounceClass: 'hard' },
  'soft-bounced': { type: 'bounced', bounceClass: 'soft' },
  'soft-bounce': { type: 'bounced', bounceClass: 'soft' },
  complained: { type: 'complained' },
  complaint: { type: 'complained' },
  rejected: { type: 'rejected' },
  opened: { type: 'opened' },
  open: { type: 'opened' },
  clicked: { type: 'clicked' },
  click: { type: 'clicked' },
  unsubscribed: { type: 'unsubscribed' },
  unsubscribe: { type: 'unsubscribed' },
};

export const WEBHOOK_TEST_TRACKING_ID = 'webhook-test';
const MAX_COUNT = 1000;

export interface SendTestWebhooksOptions {
  provider: string;
  /** The service's base URL (where the API is mounted) or the full webhook URL; default from the configuration's host, port and basePath. */
  url?: string | undefined;
  projectId?: string | undefined;
  type?: string | undefined;
  /** Recipients; each gets `count` messages. */
  to?: readonly string[] | undefined;
  /** `''` for none. */
  trackingId?: string | undefined;
  count?: string | undefined;
  /** A PEM file with SendGrid's private key, for a project whose SendGrid public key is not the demo's. */
  privateKeyFile?: string | undefined;
}

/**
 * `mailwarden webhooks send <provider>`: posts realistic signed webhooks reporting one event per
 * recipient (times `count`) to a running service, authenticated with the secrets the service's own
 * configuration gives the project (the demo's when the project is `demo` and the configuration has
 * none), and writes what it sent and what the service answered. Resolves `true` when every answer was 2xx.
 */
export async function sendTestWebhooks(config: ServerConfig, options: SendTestWebhooksOptions, write: (line: string) => void): Promise<boolean> {
  const provider = options.provider as Provider;
  if (!(providers as readonly string[]).includes(provider)) throw usage(`The provider is one of ${providers.join(', ')}.`);
  const projectId = options.projectId ?? DEMO_PROJECT;
  const kind = eventTypes[options.type ?? 'delivered'];
  if (kind === undefined) throw usage(`--type is one of ${Object.keys(eventTypes).join(', ')}.`);
  const count = Number(options.count ?? '1');
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) throw usage(`--count is a whole number from 1 to ${MAX_COUNT}.`);
  const trackingId = options.trackingId ?? WEBHOOK_TEST_TRACKING_ID;
  const recipients = options.to?.length ? options.to : ['test@example.com'];

  const auth = authOf(config, projectId, provider);
  const events: TestEvent[] = [];
  for (let i = 0; i < count; i++) {
    for (const recipient of recipients) events.push({ ...kind, recipient, trackingId: trackingId === '' ? null : trackingId });
  }
  const requests = webhooksFor(provider, auth, events, { sendGridPrivateKey: provider === 'sendgrid' ? sendGridPrivateKey(auth as SendGridAuth, options.privateKeyFile) : undefined });
  const url = targetUrl(config, options.url, projectId, provider);

  let allAccepted = true;
  for (const request of requests) {
    write(`POST ${url}`);
    for (const event of request.events) write(`  ${describeEvent(event)}`);
    const answer = await post(url, request);
    write(`→ ${answer.status} ${answer.text}`);
    if (answer.status < 200 || answer.status > 299) {
      allAccepted = false;
      const hint = hintFor(provider, answer.status);
      if (hint !== undefined) write(`  ${hint}`);
    }
  }
  return allAccepted;
}

type SendGridAuth = NonNullable<ProviderAuth['sendgrid']>;

function authOf<P extends Provider>(config: ServerConfig, projectId: string, provider: P): NonNullable<ProviderAuth[P]> {
  const configured = config.projects[projectId]?.webhooks as ProviderAuth | undefined;
  const auth = configured?.[provider] ?? (projectId === DEMO_PROJECT && configured === undefined ? (demoWebhookAuth as ProviderAuth)[provider] : undefined);
  if (auth === undefined) {
    throw usage(
      `Project "${projectId}" has no ${provider} webhook settings (projects.${projectId}.webhooks.${provider}): give the service's configuration with --config or MAILWARDEN_CONFIG.`,
    );
  }
  return auth as NonNullable<ProviderAuth[P]>;
}

/** SendGrid signs with a private key the service never sees: the demo's, or one from a file. */
function sendGridPrivateKey(auth: SendGridAuth, file: string | undefined): string {
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw usage(`Cannot read the SendGrid private key ${file}: ${(error as Error).message}`);
    }
  }
  if (auth.publicKey.replace(/\s+/g, '') === demoWebhookAuth.sendgrid.publicKey) return demoSendGridPrivateKey;
  throw usage('SendGrid signs with the private half of the configured publicKey, which the service never sees: pass it with --private-key <file.pem>.');
}

/** `--url` as a full webhook URL when it names one, else the base URL the API is mounted under. */
function targetUrl(config: ServerConfig, url: string | undefined, projectId: string, provider: Provider): string {
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const base = url ?? `http://${host}:${config.port}${config.basePath}`;
  let parsed: URL;
  try {
    parsed = new URL(base);
  } catch {
    throw usage(`--url is not a URL: ${base}`);
  }
  return new RegExp(`/webhooks/${provider}/?$`).test(parsed.pathname) ? parsed.href : webhookUrl(parsed.href, projectId, provider);
}

async function post(url: string, request: TestWebhook): Promise<{ status: number; text: string }> {
  let response: Response;
  try {
    response = await postWebhook(url, request, { signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    throw new MailwardenError('invalid_request', `Could not reach ${url}: ${cause}. Is the service running there?`);
  }
  return { status: response.status, text: (await response.text()).trim() };
}

function describeEvent(event: TestWebhook['events'][number]): string {
  const type = event.bounceClass === null ? event.type : `${event.type} (${event.bounceClass})`;
  return `${type} ${event.recipient}  message ${event.messageId}  tracking ID ${event.trackingId === null ? 'none' : JSON.stringify(event.trackingId)}`;
}

function hintFor(provider: Provider, status: number): string | undefined {
  if (provider === 'ses' && (status === 401 || status === 503)) {
    return `SES requests are signed with the testing kit's SNS key (certificate ${testSnsSigner.certificateUrl}): the service must trust it, with MAILWARDEN_UNSAFE_TRUST_TEST_SNS_CERTIFICATE=true (serve --demo does). Test only: see docs/testing.md.`;
  }
  if (status === 401) return 'The service refused the authentication: run the command with the service\'s own configuration (--config or MAILWARDEN_CONFIG) and --project.';
  return undefined;
}

function usage(message: string): MailwardenError {
  return new MailwardenError('invalid_request', message);
}
