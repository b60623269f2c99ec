import { MailwardenError } from '../errors.js';
import { brevoWebhookDefinition, type BrevoWebhookAuth } from './brevo.js';
import { mailgunWebhookDefinition, type MailgunWebhookAuth } from './mailgun.js';
import { mailerSendWebhookDefinition, type MailerSendWebhookAuth } from './mailersend.js';
import { mailjetWebhookDefinition, type MailjetWebhookAuth } from './mailjet.js';
import { mandrillWebhookDefinition, type MandrillWebhookAuth } from './mandrill.js';
import { postalWebhookDefinition, type PostalWebhookAuth } from './postal.js';
import { postmarkWebhookDefinition, type PostmarkWebhookAuth } from './postmark.js';
import { resendWebhookDefinition, type ResendWebhookAuth } from './resend.js';
import type { ProviderWebhookDefinition } from './provider.js';
import { sendGridWebhookDefinition, type SendGridWebhookAuth } from './sendgrid.js';
import { sesEventBridgeWebhookDefinition, type SesEventBridgeWebhookAuth } from './ses-eventbridge.js';
import { sesWebhookDefinition, type SesWebhookAuth } from './ses.js';
import { sparkPostWebhookDefinition, type SparkPostWebhookAuth } from './sparkpost.js';
import { webhookRoutes, type WebhookRoute } from './routes.js';

/**
 * One project's webhook authentication, per webhook route (a provider's name, or a second intake such as
 * `ses-eventbridge`). A route without an entry is refused.
 */
export interface ProviderAuth {
  ses?: SesWebhookAuth;
  sendgrid?: SendGridWebhookAuth;
  mailgun?: MailgunWebhookAuth;
  sparkpost?: SparkPostWebhookAuth;
  postmark?: PostmarkWebhookAuth;
  mandrill?: MandrillWebhookAuth;
  resend?: ResendWebhookAuth;
  brevo?: BrevoWebhookAuth;
  mailjet?: MailjetWebhookAuth;
  mailersend?: MailerSendWebhookAuth;
  postal?: PostalWebhookAuth;
  'ses-eventbridge'?: SesEventBridgeWebhookAuth;
}

/** Every webhook route's definition: the one table of the routes mailwarden takes webhooks on. */
export const providerWebhooks: { readonly [R in WebhookRoute]: ProviderWebhookDefinition<NonNullable<ProviderAuth[R]>> } = {
  ses: sesWebhookDefinition,
  sendgrid: sendGridWebhookDefinition,
  mailgun: mailgunWebhookDefinition,
  sparkpost: sparkPostWebhookDefinition,
  postmark: postmarkWebhookDefinition,
  mandrill: mandrillWebhookDefinition,
  resend: resendWebhookDefinition,
  brevo: brevoWebhookDefinition,
  mailjet: mailjetWebhookDefinition,
  mailersend: mailerSendWebhookDefinition,
  postal: postalWebhookDefinition,
  'ses-eventbridge': sesEventBridgeWebhookDefinition,
};

/**
 * The route a webhook is for, from its name (the URL's `{provider}`, or a caller's argument), or
 * `not_found` naming the routes there are. The one check of a route name, for HTTP and intake alike.
 */
export function webhookRoute(name: unknown): WebhookRoute {
  if (typeof name !== 'string' || !Object.hasOwn(providerWebhooks, name)) {
    throw new MailwardenError('not_found', `Unknown provider "${String(name)}"; use one of ${webhookRoutes.join(', ')}.`);
  }
  return name as WebhookRoute;
}

/**
 * The status of a webhook request on the route named `name` when the store is unavailable: what the
 * provider's definition says (`storeUnavailableStatus`, Brevo's 429), else `undefined` for the usual 503.
 */
export function webhookUnavailableStatus(name: string): number | undefined {
  return Object.hasOwn(providerWebhooks, name) ? providerWebhooks[name as keyof typeof providerWebhooks].storeUnavailableStatus : undefined;
}

/** The challenge a 401 of a basic-auth provider carries; the charset is RFC 7617's, as credentials are decoded. */
const BASIC_CHALLENGE = 'Basic realm="mailwarden webhooks", charset="UTF-8"';

/**
 * The `WWW-Authenticate` of a refused webhook request on the route named `name`, or `undefined`:
 * what the provider's definition says (`basicChallenge`).
 */
export function webhookChallenge(name: string): string | undefined {
  return Object.hasOwn(providerWebhooks, name) && providerWebhooks[name as WebhookRoute].basicChallenge ? BASIC_CHALLENGE : undefined;
}
