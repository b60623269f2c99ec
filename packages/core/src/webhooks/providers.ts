import { MailwardenError } from '../errors.js';
import { providers, type Provider } from '../events/delivery-event.js';
import { mailgunWebhookDefinition, type MailgunWebhookAuth } from './mailgun.js';
import { mandrillWebhookDefinition, type MandrillWebhookAuth } from './mandrill.js';
import { postmarkWebhookDefinition, type PostmarkWebhookAuth } from './postmark.js';
import type { ProviderWebhookDefinition } from './provider.js';
import { sendGridWebhookDefinition, type SendGridWebhookAuth } from './sendgrid.js';
import { sesWebhookDefinition, type SesWebhookAuth } from './ses.js';
import { sparkPostWebhookDefinition, type SparkPostWebhookAuth } from './sparkpost.js';

/** One project's webhook authentication, per provider. A provider without an entry is refused. */
export interface ProviderAuth {
  ses?: SesWebhookAuth;
  sendgrid?: SendGridWebhookAuth;
  mailgun?: MailgunWebhookAuth;
  sparkpost?: SparkPostWebhookAuth;
  postmark?: PostmarkWebhookAuth;
  mandrill?: MandrillWebhookAuth;
}

/** Every provider's webhook definition: the one table of the providers mailwarden takes webhooks from. */
export const providerWebhooks: { readonly [P in Provider]: ProviderWebhookDefinition<NonNullable<ProviderAuth[P]>> } = {
  ses: sesWebhookDefinition,
  sendgrid: sendGridWebhookDefinition,
  mailgun: mailgunWebhookDefinition,
  sparkpost: sparkPostWebhookDefinition,
  postmark: postmarkWebhookDefinition,
  mandrill: mandrillWebhookDefinition,
};

/**
 * The provider a webhook is for, from its name (the URL's `{provider}`, or a caller's argument), or
 * `not_found` naming the providers there are. The one check of a provider name, for HTTP and intake alike.
 */
export function webhookProvider(name: unknown): Provider {
  if (typeof name !== 'string' || !Object.hasOwn(providerWebhooks, name)) {
    throw new MailwardenError('not_found', `Unknown provider "${String(name)}"; use one of ${providers.join(', ')}.`);
  }
  return name as Provider;
}

/** The challenge a 401 of a basic-auth provider carries; the charset is RFC 7617's, as credentials are decoded. */
const BASIC_CHALLENGE = 'Basic realm="mailwarden webhooks", charset="UTF-8"';

/**
 * The `WWW-Authenticate` of a refused webhook request for the provider named `name`, or `undefined`:
 * what the provider's definition says (`basicChallenge`).
 */
export function webhookChallenge(name: string): string | undefined {
  return Object.hasOwn(providerWebhooks, name) && providerWebhooks[name as Provider].basicChallenge ? BASIC_CHALLENGE : undefined;
}
