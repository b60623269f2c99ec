import { readFileSync } from 'node:fs';
import { MailwardenError, webhookRoutes, type ProviderAuth, type WebhookRoute } from '@mailwarden/core';
import {
  postWebhook,
  testSnsSigner,
  webhooksFor,
  webhookUrl,
  type TestEvent,
  type TestEventType,
  type TestWebhook,
} from '@mailwarden/core/testing';
import type { ServerConfig } from './config.js';
import { DEMO_PROJECT, demoPostalPrivateKey, demoSendGridPrivateKey, demoWebhookAuth } from './demo.js';

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
  /** The stream the messages were sent in (`service_stream`); absent for none. */
  stream?: string | undefined;
  count?: string | undefined;
  /** A PEM file with SendGrid's or Postal's private key, for a project whose public key is not the demo's. */
  privateKeyFile?: string | undefined;
  /**
   * The provider's shared secret, in place of the configuration's: Mailgun's signing key, Mandrill's
   * webhook key, Resend's signing secret (`whsec_…`), MailerSend's signing secret, `user:password` for Postmark's, SparkPost's, Brevo's and (optionally) SES's basic auth, SendGrid's
   * OAuth token (optional).
   */
  secret?: string | undefined;
  /** SES: the SNS topic the receiver allowlists (`ses.topicArns`), in place of the configuration's. */
  topicArn?: string | undefined;
  /** SendGrid, unsubscribes only: the unsubscribe group (`asm_group_id`) left, posted as a `group_unsubscribe`. */
  unsubscribeGroup?: string | undefined;
  /** SES, unsubscribes only: the contact-list topic opted out of (default: the whole list). */
  topic?: string | undefined;
}

/**
 * `mailwarden webhooks send <provider>`: posts realistic signed webhooks reporting one event per
 * recipient (times `count`) to a running service or app, authenticated with the secrets given on the
 * command line, else those the service's own configuration gives the project (the demo's when the
 * project is `demo` and neither gives any), and writes what it sent and what the service answered.
 * Resolves `true` when every answer was 2xx.
 */
export async function sendTestWebhooks(
  config: ServerConfig,
  options: SendTestWebhooksOptions,
  write: (line: string) => void,
): Promise<boolean> {
  const provider = options.provider as WebhookRoute;
  if (!(webhookRoutes as readonly string[]).includes(provider)) throw usage(`The provider is one of ${webhookRoutes.join(', ')}.`);
  const projectId = options.projectId ?? DEMO_PROJECT;
  const kind = eventTypes[options.type ?? 'delivered'];
  if (kind === undefined) throw usage(`--type is one of ${Object.keys(eventTypes).join(', ')}.`);
  const count = Number(options.count ?? '1');
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) throw usage(`--count is a whole number from 1 to ${MAX_COUNT}.`);
  const scope = unsubscribeScopeOf(provider, kind.type, options);
  const trackingId = options.trackingId ?? WEBHOOK_TEST_TRACKING_ID;
  const recipients = options.to?.length ? options.to : ['test@example.com'];

  const url = targetUrl(config, options.url, projectId, provider);
  const { auth, sendGridPrivateKey, postalPrivateKey } = signingOf(provider, config, projectId, options, url);
  const events: TestEvent[] = [];
  for (let i = 0; i < count; i++) {
    for (const recipient of recipients) {
      events.push({
        ...kind,
        recipient,
        trackingId: trackingId === '' ? null : trackingId,
        ...(options.stream === undefined ? {} : { stream: options.stream }),
        ...scope,
      });
    }
  }
  const requests = webhooksFor(provider, auth, events, { sendGridPrivateKey, postalPrivateKey });

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

/** `--unsubscribe-group` (SendGrid) and `--topic` (SES): the provider's own scope of an unsubscribe (docs/providers/). */
function unsubscribeScopeOf(
  provider: WebhookRoute,
  type: TestEventType,
  options: Pick<SendTestWebhooksOptions, 'unsubscribeGroup' | 'topic'>,
): Pick<TestEvent, 'unsubscribeGroup' | 'topic'> {
  const { unsubscribeGroup, topic } = options;
  if ((unsubscribeGroup !== undefined || topic !== undefined) && type !== 'unsubscribed') {
    throw usage('--unsubscribe-group and --topic go with --type unsubscribe.');
  }
  if (unsubscribeGroup !== undefined) {
    if (provider !== 'sendgrid') throw usage('--unsubscribe-group goes with sendgrid.');
    if (!/^[0-9]{1,15}$/.test(unsubscribeGroup)) throw usage("--unsubscribe-group is SendGrid's group id, a number.");
    return { unsubscribeGroup: Number(unsubscribeGroup) };
  }
  if (topic !== undefined) {
    if (provider !== 'ses' && provider !== 'ses-eventbridge') throw usage('--topic goes with ses and ses-eventbridge.');
    if (topic === '') throw usage('--topic is empty.');
    return { topic };
  }
  return {};
}

/**
 * What signs the requests. Each secret given on the command line takes the place of the configuration's
 * (`projects.<id>.webhooks.<provider>`); the demo's secrets stand in only when neither gives any, so
 * `--secret` alone reaches an app that has no service configuration (docs/server.md).
 */
function signingOf<P extends WebhookRoute>(
  provider: P,
  config: ServerConfig,
  projectId: string,
  given: Pick<SendTestWebhooksOptions, 'secret' | 'privateKeyFile' | 'topicArn'>,
  url: string,
): { auth: NonNullable<ProviderAuth[P]>; sendGridPrivateKey?: string; postalPrivateKey?: string } {
  if (given.topicArn !== undefined && provider !== 'ses') throw usage('--topic-arn goes with ses.');
  if (given.privateKeyFile !== undefined && provider !== 'sendgrid' && provider !== 'postal') {
    throw usage('--private-key goes with sendgrid and postal.');
  }
  if (given.secret === '') throw usage('--secret is empty.');
  const configured = (config.projects[projectId]?.webhooks as ProviderAuth | undefined)?.[provider];
  const givesAny = given.secret !== undefined || given.privateKeyFile !== undefined || given.topicArn !== undefined;
  const demoFallback = projectId === DEMO_PROJECT && config.projects[projectId]?.webhooks === undefined && !givesAny;
  const base = (configured ?? (demoFallback ? (demoWebhookAuth as ProviderAuth)[provider] : undefined)) as ProviderAuth[WebhookRoute];
  const missing = (flag: string): MailwardenError =>
    usage(
      `Project "${projectId}" has no ${provider} webhook settings (projects.${projectId}.webhooks.${provider}): pass ${flag}, or give the service's configuration with --config or MAILWARDEN_CONFIG.`,
    );
  const secret = given.secret;
  const auth = ((): ProviderAuth[WebhookRoute] => {
    switch (provider) {
      case 'ses': {
        const ses = base as ProviderAuth['ses'];
        const topicArns = given.topicArn === undefined ? ses?.topicArns : [given.topicArn];
        if (topicArns === undefined) throw missing('--topic-arn <the topic ARN the app allowlists>');
        const basic = secret === undefined ? ses?.basic : [basicCredentials(secret, provider)];
        return { topicArns, ...(basic === undefined ? {} : { basic }) };
      }
      case 'sendgrid': {
        const sendgrid = base as SendGridAuth | undefined;
        const oauthTokens = secret === undefined ? sendgrid?.oauthTokens : [secret];
        // The groups the service maps, so the command shows the stream an unsubscribe lands in.
        const unsubscribeGroups = sendgrid?.unsubscribeGroups;
        return {
          publicKey: sendgrid?.publicKey ?? '',
          ...(oauthTokens === undefined ? {} : { oauthTokens }),
          ...(unsubscribeGroups === undefined ? {} : { unsubscribeGroups }),
        };
      }
      case 'mailgun': {
        const signingKey = secret ?? (base as ProviderAuth['mailgun'])?.signingKey;
        if (signingKey === undefined) throw missing("--secret <Mailgun's webhook signing key>");
        return { signingKey };
      }
      case 'sparkpost':
      case 'postmark':
      case 'brevo':
      case 'mailjet': {
        if (secret !== undefined) return { basic: [basicCredentials(secret, provider)] };
        if (base === undefined) throw missing('--secret <user:password>');
        return base;
      }
      case 'ses-eventbridge': {
        // The connection's Basic credentials; a configured API-key header or bearer token serves as it is.
        if (secret !== undefined) return { basic: [basicCredentials(secret, provider)] };
        if (base === undefined) throw missing('--secret <user:password>');
        return base;
      }
      case 'mailersend': {
        const signingSecret = secret ?? (base as ProviderAuth['mailersend'])?.signingSecret;
        if (signingSecret === undefined) throw missing("--secret <MailerSend's webhook signing secret>");
        return { signingSecret };
      }
      case 'mandrill': {
        const mandrill = base as ProviderAuth['mandrill'];
        const webhookKey = secret ?? mandrill?.webhookKey;
        if (webhookKey === undefined) throw missing("--secret <Mandrill's webhook key>");
        // Mandrill signs the URL as entered at Mandrill: the configured one, else the one posted to.
        return { webhookKey, url: mandrill?.url ?? url };
      }
      case 'resend': {
        const signingSecret = secret ?? (base as ProviderAuth['resend'])?.signingSecret;
        if (signingSecret === undefined) throw missing("--secret <Resend's signing secret, whsec_…>");
        return { signingSecret };
      }
      case 'postal':
        // Postal signs with its server's private key: the public half only says which key to ask for.
        return { publicKey: (base as ProviderAuth['postal'])?.publicKey ?? '' };
    }
    throw usage(`Unknown provider "${String(provider)}".`);
  })();
  return {
    auth: auth as NonNullable<ProviderAuth[P]>,
    ...(provider === 'sendgrid' ? { sendGridPrivateKey: sendGridPrivateKey(base as SendGridAuth | undefined, given.privateKeyFile) } : {}),
    ...(provider === 'postal' ? { postalPrivateKey: postalPrivateKey(base as ProviderAuth['postal'], given.privateKeyFile) } : {}),
  };
}

/** `user:password`, as Basic auth takes it: the user ends at the first colon (RFC 7617). */
function basicCredentials(secret: string, provider: WebhookRoute): { username: string; password: string } {
  const colon = secret.indexOf(':');
  if (colon === -1) throw usage(`--secret for ${provider} is the webhook's Basic auth credentials, user:password.`);
  return { username: secret.slice(0, colon), password: secret.slice(colon + 1) };
}

/** SendGrid signs with a private key the service never sees: the demo's, or one from a file. */
function sendGridPrivateKey(auth: SendGridAuth | undefined, file: string | undefined): string {
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw usage(`Cannot read the SendGrid private key ${file}: ${(error as Error).message}`);
    }
  }
  if (auth !== undefined && auth.publicKey.replace(/\s+/g, '') === demoWebhookAuth.sendgrid.publicKey) return demoSendGridPrivateKey;
  throw usage(
    'SendGrid signs with the private half of the publicKey the app is configured with, which the app never sees: pass it with --private-key <file.pem>.',
  );
}

/** Postal signs with its server's private key, which the service never sees: the demo's, or one from a file. */
function postalPrivateKey(auth: ProviderAuth['postal'], file: string | undefined): string {
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw usage(`Cannot read the Postal private key ${file}: ${(error as Error).message}`);
    }
  }
  if (auth !== undefined && auth.publicKey.replace(/\s+/g, '') === demoWebhookAuth.postal.publicKey) return demoPostalPrivateKey;
  throw usage(
    "Postal signs with the private half of the publicKey the app is configured with, which the app never sees: pass the Postal server's signing key with --private-key <file.pem>.",
  );
}

/** `--url` as a full webhook URL when it names one, else the base URL the API is mounted under. */
function targetUrl(config: ServerConfig, url: string | undefined, projectId: string, provider: WebhookRoute): string {
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
  const stream = event.stream === undefined ? '' : `  stream ${event.stream}`;
  return `${type} ${event.recipient}  message ${event.messageId}  tracking ID ${event.trackingId === null ? 'none' : JSON.stringify(event.trackingId)}${stream}`;
}

function hintFor(provider: WebhookRoute, status: number): string | undefined {
  if (provider === 'ses' && (status === 401 || status === 503)) {
    return `SES requests are signed with the testing kit's SNS key (certificate ${testSnsSigner.certificateUrl}): the service must trust it, with MAILWARDEN_UNSAFE_TRUST_TEST_SNS_CERTIFICATE=true (serve --demo does), or an app of yours with webhooks.environment.fetchCertificate: fetchSnsCertificateTrustingTestSigner (@mailwarden/core/testing). Test only: see docs/testing.md.`;
  }
  if (status === 401) {
    return "The service refused the authentication: pass the app's secret (--secret, or --private-key for SendGrid and Postal), or run the command with the service's own configuration (--config or MAILWARDEN_CONFIG) and --project.";
  }
  return undefined;
}

function usage(message: string): MailwardenError {
  return new MailwardenError('invalid_request', message);
}
