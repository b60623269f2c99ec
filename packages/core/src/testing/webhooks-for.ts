import type { KeyObject } from 'node:crypto';
import type { WebhookRoute } from '../webhooks/routes.js';
// The public types, wherever the webhooks module keeps them.
import type { ProviderAuth, SharedSecretAuth } from '../index.js';
import { mailgunWebhook } from './mailgun.js';
import { mailerSendWebhook } from './mailersend.js';
import { mailjetWebhook } from './mailjet.js';
import { brevoWebhook } from './brevo.js';
import { mandrillWebhook } from './mandrill.js';
import { postalWebhook } from './postal.js';
import { postmarkWebhook } from './postmark.js';
import { resendWebhook } from './resend.js';
import { sendGridWebhook } from './sendgrid.js';
import { sesEventBridgeWebhook } from './ses-eventbridge.js';
import { sesWebhook } from './ses.js';
import { sparkPostWebhook } from './sparkpost.js';
import { invalid, type SharedSecretCredentials, type TestEvent, type TestWebhook } from './test-event.js';

export interface WebhooksForOptions {
  /**
   * SendGrid's private key: the project is configured with the public key only, so the private half
   * must come from whoever made the pair (`createSendGridKeyPair`).
   */
  sendGridPrivateKey?: string | KeyObject | undefined;
  /** Postal's private key, likewise: the private half of the configured `postal.publicKey` (`createPostalKeyPair`). */
  postalPrivateKey?: string | KeyObject | undefined;
  /** When the provider posts; default now. */
  signedAt?: Date | undefined;
}

/**
 * The requests a provider would post to report `events` to a project configured with `auth` (its
 * `ProviderAuth` entry for that route: a provider, or `ses-eventbridge`), signed or authenticated with the secrets `auth` names: as many
 * requests as the provider makes (Mailgun and Postmark post each event alone, SES one notification per
 * message and event type, through SNS or EventBridge, the others one batch). SES requests are signed with `testSnsSigner`, whose
 * certificate the receiver must trust (`fetchTestSnsCertificate`). `mailwarden webhooks send` uses it.
 *
 * @example
 * const auth = { mailgun: { signingKey: 'key-…' } };
 * for (const request of webhooksFor('mailgun', auth.mailgun, [{ type: 'delivered', recipient: 'bob@example.com' }])) {
 *   await mailwarden.ingestWebhook('mailgun', 'acme', request);
 * }
 */
export function webhooksFor<R extends WebhookRoute>(
  provider: R,
  auth: NonNullable<ProviderAuth[R]>,
  events: readonly TestEvent[],
  options: WebhooksForOptions = {},
): TestWebhook[] {
  const signedAt = options.signedAt ?? new Date();
  const each = (build: (event: TestEvent) => TestWebhook): TestWebhook[] => events.map(build);
  switch (provider) {
    case 'ses': {
      const ses = auth as NonNullable<ProviderAuth['ses']>;
      const topicArn = ses.topicArns[0];
      if (topicArn === undefined) throw invalid('The SES configuration allowlists no topic (topicArns).');
      return groupByMessage(events).map((group) => sesWebhook({ events: group, topicArn, basic: ses.basic?.[0], signedAt }));
    }
    case 'sendgrid': {
      const privateKey = options.sendGridPrivateKey;
      if (privateKey === undefined) {
        throw invalid(
          'SendGrid signs with a private key its receiver never sees: pass sendGridPrivateKey, the private half of the configured publicKey.',
        );
      }
      const { oauthTokens, unsubscribeGroups } = auth as NonNullable<ProviderAuth['sendgrid']>;
      return [sendGridWebhook({ events, privateKey, oauthToken: oauthTokens?.[0], unsubscribeGroups, signedAt })];
    }
    case 'mailgun':
      return each((event) =>
        mailgunWebhook({ events: [event], signingKey: (auth as NonNullable<ProviderAuth['mailgun']>).signingKey, signedAt }),
      );
    case 'sparkpost':
      return [sparkPostWebhook({ events, auth: credentialsOf(auth as SharedSecretAuth, 'SparkPost'), signedAt })];
    case 'postmark':
      return each((event) => postmarkWebhook({ events: [event], auth: credentialsOf(auth as SharedSecretAuth, 'Postmark'), signedAt }));
    case 'mandrill': {
      const { webhookKey, url } = auth as NonNullable<ProviderAuth['mandrill']>;
      return [mandrillWebhook({ events, webhookKey, url, signedAt })];
    }
    case 'brevo':
      return [brevoWebhook({ events, auth: credentialsOf(auth as SharedSecretAuth, 'Brevo'), signedAt })];
    case 'resend': {
      const { signingSecret } = auth as NonNullable<ProviderAuth['resend']>;
      return each((event) => resendWebhook({ events: [event], signingSecret, signedAt }));
    }
    case 'mailjet':
      return [mailjetWebhook({ events, auth: credentialsOf(auth as SharedSecretAuth, 'Mailjet'), signedAt })];
    case 'mailersend': {
      const { signingSecret } = auth as NonNullable<ProviderAuth['mailersend']>;
      const secret = typeof signingSecret === 'string' ? signingSecret : signingSecret[0];
      if (secret === undefined) throw invalid('The MailerSend configuration names no signing secret.');
      return each((event) => mailerSendWebhook({ events: [event], signingSecret: secret, signedAt }));
    }
    case 'ses-eventbridge':
      return groupByMessage(events).map((group) =>
        sesEventBridgeWebhook({ events: group, auth: credentialsOf(auth as SharedSecretAuth, 'SES EventBridge'), signedAt }),
      );
    case 'postal': {
      const privateKey = options.postalPrivateKey;
      if (privateKey === undefined) {
        throw invalid(
          'Postal signs with a private key its receiver never sees: pass postalPrivateKey, the private half of the configured publicKey.',
        );
      }
      return each((event) => postalWebhook({ events: [event], privateKey, signedAt }));
    }
  }
  throw invalid(`Unknown provider "${String(provider)}".`);
}

/** One configured secret is enough: the receiver admits a request that presents any of them. */
function credentialsOf(auth: SharedSecretAuth, name: string): SharedSecretCredentials {
  const basic = auth.basic?.[0];
  if (basic !== undefined) return { basic };
  const bearer = auth.bearer?.[0];
  if (bearer !== undefined) return { bearer };
  const header = auth.headers?.[0];
  if (header !== undefined) return { headers: { [header.name]: header.value } };
  throw invalid(`The ${name} configuration names no credentials (basic, bearer or headers).`);
}

/** SES reports one event type of one message per notification: events grouped so, in order of first appearance. */
function groupByMessage(events: readonly TestEvent[]): TestEvent[][] {
  const groups = new Map<string, TestEvent[]>();
  events.forEach((event, index) => {
    // Events without a message id are each a message of their own.
    const key =
      event.messageId === undefined
        ? `#${index}`
        : JSON.stringify([
            event.messageId,
            event.type,
            event.bounceClass ?? null,
            event.trackingId ?? null,
            event.stream ?? null,
            event.topic ?? null,
            event.occurredAt?.getTime() ?? null,
          ]);
    groups.set(key, [...(groups.get(key) ?? []), event]);
  });
  return [...groups.values()];
}
