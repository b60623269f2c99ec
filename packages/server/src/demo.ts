import { randomBytes } from 'node:crypto';
import {
  type AlertRules,
  eventDetails,
  type DeliveryEvent,
  type DeliveryEventType,
  type EventDetails,
  type Mailwarden,
  type Provider,
  type ProviderAuth,
  type SuppressionRules,
  webhookRoutes,
} from '@mailwarden/core';
import type { ServerConfig } from './config.js';

export const DEMO_PROJECT = 'demo';
/**
 * The demo project's default stream: its messages carry no stream, so their recipients' unsubscribes are
 * recorded here rather than project-wide (docs/decisions.md, "Who suppresses on an unsubscribe").
 */
export const DEMO_DEFAULT_STREAM = 'marketing';

/** The demo project's rules: "suppress after 3 soft bounces in 7 days", as one line of configuration sets it. */
export const DEMO_RULES: SuppressionRules = { softBounces: { bounces: 3, days: 7 } };

/**
 * The demo project's deliverability alerts: the defaults, SES's review levels (5 % bounces, 0.1 %
 * complaints over the last 1 000 messages). While seeding, the welcome mails' bounces fire the bounce
 * alert at the 100th message (7 %) and it resolves as the window fills; the newsletters' complaints
 * (about 0.9 %) fire the complaint alert, which stays up (docs/server.md).
 */
export const DEMO_ALERTS = {} satisfies AlertRules;

/** On the demo project's allowlist (a seed inbox): its hard bounce is recorded and suppresses nothing. */
export const DEMO_ALLOWLISTED = 'seed-inbox@example.com';

/**
 * The demo project's webhook secrets, for every webhook route. They are public (they are in this file), so
 * `mailwarden webhooks send <provider>` can sign for the demo with no flags: never give them to a real
 * project. SES is signed with the testing kit's SNS key, which the demo service trusts.
 */
export const demoWebhookAuth = {
  ses: { topicArns: ['arn:aws:sns:us-east-1:123456789012:mailwarden-demo'] },
  sendgrid: {
    publicKey:
      'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEBhZsXI7Fbca/1wz1x1SbAOGybMEQBNzqahoNALflHSqyZaSs9Y7i/OT7bcwiNcQYdzShqVgbAzAmGD+9Pw0Zvw==',
  },
  mailgun: { signingKey: 'mailwarden-demo-mailgun-signing-key' },
  sparkpost: { basic: [{ username: 'sparkpost', password: 'mailwarden-demo' }] },
  postmark: { basic: [{ username: 'postmark', password: 'mailwarden-demo' }] },
  brevo: { basic: [{ username: 'brevo', password: 'mailwarden-demo' }] },
  mailjet: { basic: [{ username: 'mailjet', password: 'mailwarden-demo' }] },
  // Mandrill signs the URL as entered at Mandrill, not the one the service sees: any fixed URL will do.
  mandrill: { webhookKey: 'mailwarden-demo-mandrill-key', url: 'http://127.0.0.1:3000/projects/demo/webhooks/mandrill' },
  resend: { signingSecret: 'whsec_bWFpbHdhcmRlbi1kZW1vLXJlc2VuZC1zaWduaW5nLWtleQ==' },
  // Postal signs with its server's RSA key: the base64 public key, as Postal shows it.
  postal: {
    publicKey:
      'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA5btb7UI9+nZAJN5ntqXCqSOsVUK2E1s5FRvxwdanVNp2WNjesv3J3xeDrEziDAiFp/MIDkkFDjNUyhy7QQFuitIWSaI4gIoeD0c3L76U7wFhgNALuY+vS4FQX4A7uOBJ8hO8TkcHJiQQ5xEh1EQp1oLu7mR976GUqLk7tt8I2M+liegUNp5hcIW+/9HosoqzWp5Fz5TBxJPzbXrP/szf7ut+3KY/9aup411RUjldIBPodlsJzVKLiPwYmuGYXbM4kA9iLEtetEvwRG+T0txSScPQNYBb6NpiYuZW7XSv5wTBW0Md6V84Cudj35Lpv8NxmiARhnBvHB6YWDBik4fgWwIDAQAB',
  },
  mailersend: { signingSecret: 'mailwarden-demo-mailersend-signing-secret' },
  // EventBridge's connection: an API-key header (a Basic or OAuth connection would work as well).
  'ses-eventbridge': { headers: [{ name: 'X-Webhook-Secret', value: 'mailwarden-demo-eventbridge' }] },
} satisfies Required<ProviderAuth>;

/** The private half of the demo's SendGrid key (SendGrid keeps it in real life; the demo is its own SendGrid). */
export const demoSendGridPrivateKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgL4fKtNQmOsxXS6Oe
H8jc8eNLt/7TVLl4vMxJdGoLSH6hRANCAAQGFmxcjsVtxr/XDPXHVJsA4bJswRAE
3OpqGg0At+UdKrJlpKz1juL85PttzCI1xBh3NKGpWBsDMCYYP70/DRm/
-----END PRIVATE KEY-----
`;

/** The private half of the demo's Postal key (the Postal server keeps it in real life; the demo is its own Postal). */
export const demoPostalPrivateKey = `-----BEGIN PRIVATE KEY-----
MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQDlu1vtQj36dkAk
3me2pcKpI6xVQrYTWzkVG/HB1qdU2nZY2N6y/cnfF4OsTOIMCIWn8wgOSQUOM1TK
HLtBAW6K0hZJojiAih4PRzcvvpTvAWGA0Au5j69LgVBfgDu44EnyE7xORwcmJBDn
ESHURCnWgu7uZH3voZSouTu23wjYz6WJ6BQ2nmFwhb7/0eiyirNankXPlMHEk/Nt
es/+zN/u637cpj/1q6njXVFSOV0gE+h2WwnNUouI/Bia4ZhdsziQD2IsS160S/BE
b5PS3FJJw9A1gFvo2mJi5lbtdK/nBMFbQx3pXzgK52Pfkum/w3GaIBGGcG8cHphY
MGKTh+BbAgMBAAECggEAIJH5HQCsv9M/EdsUUjFbEVbU6nucS889nxAIrQYtUBru
93a70B2qHr57NRTrYXBd3qtWo4vXsyU06ri7FaLJ1NWnQkZFA3hRfbIHkXXQMLh9
5eDZILRN0oMhbYDFNtdZtH/2zRRF37LyUIg9xxXo5phGnrbRogVDCc7FOA6T9wTo
rpECaW2oGLr84kI56f/aAw+3AGlITw0GRGVuWCQC9jkOQNgEKugHWenLHdi8nfZ7
ofsNg1SXfv0zjOPkY+xOv9zHxGfpYbJjd1ZqbxE3nQQwxSUFUSf7gAOoM3oEzWP/
bsGhWijaejCi5/rBPp9FUHnJhEb0x9GannZldur/ZQKBgQD8LDliyfjE2rSe2Gg6
RVBO/IV1vD2JP4veGFRZ4abjLadstZojYpBG3eV+dlT5xCSxHmnWal9mVjqs8cbt
xTOqsXtMLzHm5DKZNGiWS1UEapdNvlknhC1FPEoei4q5Ji5Fxel0w+iDIWzfpson
grWJlkjI07VElyQ8okRzHmQBXwKBgQDpN/HPfERdr91ztms0qvqNucGi5oT6i76+
p/BQoJboGSSJyU7JjHKfkZD6VlLi/RHmz1H2uFgygPFfs1BUgCaK4BfPCXcmoLO1
tiRW77Lfb8lJaN+HbijfmX99xMdILA/rfi1eJ8lDPqqbIM86MJYqsq79QkOr09XM
Ygn4GasWhQKBgQC8kJ1Av+Kj4R7bANu/ZwFMbwulJGOnc7s1EmBQ7amLiyH86jce
ap+UPm1TiUy1j/QX9bQSv2wi7CvoEss8FRAzfY/DQi9AhjdH1Ka4bBBgwwvs+H9W
S0JG2XRbLuFG3cQQLJQL2krNc3skKmZT8SuqfJRkh9quNY7FQFmK85i4ZQKBgQDN
oedTM9Wv6ZXQJiLmoG8lMYk7khfkNf1sa/UnkkEcyrZ9ywLuESkr6xSythSFUfBL
27cAXFBfz3OEFz4YE5poTuiPQ2BMrdtmt//Yq6bC/fS0BoU5C3d8mAJiqXOw/jDX
SjzETT5XTVTuTQKK4zY01bIXWisCwVg8yqDRoghJZQKBgQDH+2Xp9WjM1Dhpbqfu
7KSa/RhkrHQGGTgsnH8/huvMQtHWS2t8Y7GFIEkud1x5tSKRhasge39KnLrZr3/Q
7Imk+FZz5TEVm5ZeQbuW4f4jI9M5f/0p/MflYsZw30b+2SP5zzP6KBoQuD/DOzer
xRPnNZA2rCJOm3iE3aLTej7HFw==
-----END PRIVATE KEY-----
`;

/**
 * The configuration with a `demo` project: a fresh random API key, the demo webhook secrets (unless the
 * configuration gives the project its own), the soft-bounce rule `DEMO_RULES` and the alerts
 * `DEMO_ALERTS` (unless it has its own), the testing kit's SNS certificate trusted, and one-click
 * unsubscribe links that work at once: a fresh random secret unless configured, and without a
 * `publicUrl`, links at the address the service listens on, the one the banner prints
 * (docs/unsubscribe.md#the-demo).
 */
export function withDemoProject(config: ServerConfig): { config: ServerConfig; apiKey: string } {
  const apiKey = `mw_demo_${randomBytes(12).toString('hex')}`;
  const existing = config.projects[DEMO_PROJECT];
  const demo = {
    ...existing,
    apiKeys: [...(existing?.apiKeys ?? []), apiKey],
    webhooks: existing?.webhooks ?? demoWebhookAuth,
    defaultStream: existing?.defaultStream ?? DEMO_DEFAULT_STREAM,
    rules: existing?.rules ?? DEMO_RULES,
    // Alerts turn the change feed on too (config.ts, changeFeedOf): the crossing is its first alert change.
    alerts: existing?.alerts ?? DEMO_ALERTS,
  };
  return {
    apiKey,
    config: {
      ...config,
      unsafeTrustTestSnsCertificate: true,
      projects: { ...config.projects, [DEMO_PROJECT]: demo },
      unsubscribeSecrets: config.unsubscribeSecrets ?? [randomBytes(32).toString('base64url')],
    },
  };
}

type DemoProvider = Exclude<Provider, 'mandrill'>;

/**
 * A tracking ID of the demo and how its messages fare. A `blast` (a newsletter) goes out within about a
 * day of `startedDaysAgo` and its opens fade over the following weeks; a `stream` (transactional mail)
 * goes out every day from then up to now. The rates are shares of the messages, except `click` and
 * `unsubscribe`, which are shares of the opened ones.
 */
interface DemoCampaign {
  trackingId: string;
  provider: DemoProvider;
  messages: number;
  kind: 'blast' | 'stream';
  startedDaysAgo: number;
  /** Not sent by the provider: the address was on its own suppression list (for providers with `ownListBounce`). */
  rejected: number;
  hardBounce: number;
  /** Deferred until the provider gave up. */
  softBounce: number;
  /** Deferred once, then delivered. */
  deferral: number;
  complaint: number;
  open: number;
  click: number;
  unsubscribe: number;
}

const campaigns: readonly DemoCampaign[] = [
  {
    trackingId: 'welcome-2026-11',
    provider: 'sendgrid',
    messages: 120,
    kind: 'stream',
    startedDaysAgo: 21,
    rejected: 0,
    hardBounce: 0.04,
    softBounce: 0.02,
    deferral: 0.06,
    complaint: 0,
    open: 0.6,
    click: 0.35,
    unsubscribe: 0.01,
  },
  {
    trackingId: 'newsletter-2026-11-13',
    provider: 'ses',
    messages: 300,
    kind: 'blast',
    startedDaysAgo: 18,
    rejected: 0.01,
    hardBounce: 0.02,
    softBounce: 0.03,
    deferral: 0.07,
    complaint: 0.015,
    open: 0.42,
    click: 0.25,
    unsubscribe: 0.06,
  },
  {
    trackingId: 'newsletter-2026-11-20',
    provider: 'ses',
    messages: 320,
    kind: 'blast',
    startedDaysAgo: 11,
    rejected: 0.01,
    hardBounce: 0.02,
    softBounce: 0.03,
    deferral: 0.07,
    complaint: 0.015,
    open: 0.4,
    click: 0.25,
    unsubscribe: 0.06,
  },
  {
    trackingId: 'password-reset',
    provider: 'postmark',
    messages: 70,
    kind: 'stream',
    startedDaysAgo: 21,
    rejected: 0,
    hardBounce: 0.02,
    softBounce: 0.02,
    deferral: 0.04,
    complaint: 0,
    open: 0.7,
    click: 0.8,
    unsubscribe: 0,
  },
  // Mailgun reports no soft bounce: it retries a temporary failure itself, then delivers or fails for good.
  {
    trackingId: 'order-confirmation',
    provider: 'mailgun',
    messages: 110,
    kind: 'stream',
    startedDaysAgo: 21,
    rejected: 0,
    hardBounce: 0.02,
    softBounce: 0,
    deferral: 0.1,
    complaint: 0,
    open: 0.55,
    click: 0.2,
    unsubscribe: 0,
  },
  {
    trackingId: 'black-friday-2026',
    provider: 'sparkpost',
    messages: 240,
    kind: 'blast',
    startedDaysAgo: 6,
    rejected: 0,
    hardBounce: 0.04,
    softBounce: 0.05,
    deferral: 0.08,
    complaint: 0.03,
    open: 0.35,
    click: 0.3,
    unsubscribe: 0.05,
  },
];

/**
 * What each provider tells beside the receiving server's reply, as its webhook parser records it
 * (packages/core/src/webhooks): whether it reports the send, the reply to a delivery, its own
 * classification of a hard bounce, a soft bounce and a deferral, a complaint's feedback type, and its
 * report of an address it did not send to because the address was on its own suppression list.
 */
const providerProfiles: Record<
  DemoProvider,
  {
    reportsSend: boolean;
    delivered?: EventDetails;
    hardBounce: string;
    softBounce?: string;
    deferral?: string;
    feedbackType?: string;
    ownListBounce?: EventDetails;
  }
> = {
  ses: {
    reportsSend: true,
    delivered: { smtpStatus: '2.6.0', diagnostic: '250 2.6.0 Message received' },
    hardBounce: 'Permanent/General',
    softBounce: 'Transient/MailboxFull',
    deferral: 'General',
    feedbackType: 'abuse',
    ownListBounce: {
      smtpStatus: '5.1.1',
      diagnostic: 'Amazon SES did not send the message to this address because it is on the suppression list for your account.',
      bounceClassification: 'Permanent/OnAccountSuppressionList',
      rejectReason: 'OnAccountSuppressionList',
    },
  },
  sendgrid: {
    reportsSend: true,
    delivered: { smtpStatus: '250', diagnostic: '250 OK' },
    hardBounce: 'Invalid Address',
    softBounce: 'Mailbox Unavailable',
  },
  mailgun: {
    reportsSend: true,
    delivered: { smtpStatus: '250', diagnostic: 'OK' },
    hardBounce: 'permanent/bounce',
    deferral: 'temporary/generic',
  },
  sparkpost: { reportsSend: true, hardBounce: '10', softBounce: '22', feedbackType: 'abuse' },
  // MailerSend's bounce_type is its classification; it says nothing of a complaint's kind.
  mailersend: { reportsSend: true, hardBounce: 'hard', softBounce: 'soft' },
  // Postmark reports no send, and no feedback type with a complaint.
  postmark: {
    reportsSend: false,
    delivered: { smtpStatus: '2.0.0', diagnostic: 'smtp;250 2.0.0 OK' },
    hardBounce: 'HardBounce',
    softBounce: 'SoftBounce',
    deferral: 'Transient',
  },
  // Brevo classifies a bounce by its event name only, and says nothing of a complaint's kind.
  brevo: { reportsSend: true, hardBounce: 'hard_bounce', softBounce: 'soft_bounce' },
  // Mailjet's sent is the delivery; it classifies by error_related_to and error, and names a complaint's feedback loop.
  mailjet: {
    reportsSend: false,
    delivered: { smtpStatus: '2.0.0', diagnostic: 'sent (250 2.0.0 OK)' },
    hardBounce: 'recipient: user unknown',
    softBounce: 'recipient: quota exceeded',
    deferral: 'domain: greylisted',
    feedbackType: 'JMRPP',
  },
  // Resend passes on no reply with a delivery, nor a feedback type with a complaint.
  resend: {
    reportsSend: true,
    hardBounce: 'Permanent/General',
    softBounce: 'Transient/MailboxFull',
    ownListBounce: { rejectReason: 'OnAccountSuppressionList' },
  },
  // Postal reports no send (MessageSent is the delivery) and no complaint; its status is its classification.
  postal: {
    reportsSend: false,
    delivered: { smtpStatus: '2.0.0', diagnostic: '250 2.0.0 OK' },
    hardBounce: 'HardFail',
    softBounce: 'HardFail',
    deferral: 'SoftFail',
  },
};

/** Receiving servers' replies, as providers pass them on. */
const hardBounceReplies: readonly ((recipient: string) => EventDetails)[] = [
  () => ({
    smtpStatus: '5.1.1',
    diagnostic:
      "550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces.",
  }),
  (recipient) => ({
    smtpStatus: '5.1.1',
    diagnostic: `550 5.1.1 <${recipient}>: Recipient address rejected: User unknown in virtual mailbox table`,
  }),
  () => ({ smtpStatus: '5.2.1', diagnostic: '550 5.2.1 The email account that you tried to reach is disabled.' }),
  () => ({ smtpStatus: '5.1.10', diagnostic: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup' }),
];
const deferralReplies: readonly EventDetails[] = [
  { smtpStatus: '4.7.1', diagnostic: '451 4.7.1 Greylisted, please try again later' },
  { smtpStatus: '4.7.0', diagnostic: '421 4.7.0 Temporary System Problem. Try again later.' },
  { smtpStatus: '4.4.2', diagnostic: '421 4.4.2 Connection dropped due to timeout' },
];
const mailboxFull: EventDetails = { smtpStatus: '4.2.2', diagnostic: '452 4.2.2 The email account that you tried to reach is over quota.' };

const names = [
  'alice',
  'bob',
  'carol',
  'dave',
  'erin',
  'frank',
  'grace',
  'heidi',
  'ivan',
  'judy',
  'mallory',
  'niaj',
  'olivia',
  'peggy',
  'rupert',
  'sybil',
  'trent',
  'victor',
  'walter',
  'yasmin',
];
const domains = ['example.com', 'example.org', 'example.net', 'mail.example.com'];
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Data that looks like real use, the same on every start (relative to `now`): six tracking IDs with 1 168
 * messages from five providers over the last three weeks, three campaigns sent at once whose opens fade
 * over the following days and three kinds of transactional mail sent every day. Each message has the
 * events its provider would report (sent, deferred, delivered, opened, clicked, unsubscribed; hard and
 * soft bounces, rejections and complaints) with the SMTP details and classifications providers give; the
 * hard bounces and complaints are suppressed automatically, beside three addresses added through the API
 * and three imported; one address soft-bounces three times (suppressed where the project has `DEMO_RULES`)
 * and one allowlisted address hard-bounces (suppressed nowhere). No event lies after `now`: a message still being retried stays deferred.
 */
export async function seedDemo(mailwarden: Mailwarden, now = Date.now()): Promise<void> {
  const random = seededRandom(20261123);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  // Exponential waits: most are short, a few long, as people open mail.
  const wait = (mean: number) => -mean * Math.log(1 - random());
  const events: DeliveryEvent[] = [];
  type Message = Pick<DeliveryEvent, 'provider' | 'messageId' | 'recipient' | 'trackingId'>;
  type Extra = Pick<DeliveryEvent, 'bounceClass' | 'providerSuppression'> & { details?: Parameters<typeof eventDetails>[0] };
  const add = (message: Message, type: DeliveryEventType, at: number, { details, ...extra }: Extra = {}) => {
    if (at > now) return;
    const fitted = details === undefined ? undefined : eventDetails(details);
    events.push({
      ...message,
      ...extra,
      type,
      occurredAt: new Date(Math.round(at)),
      eventKey: `demo-${events.length}`,
      ...(fitted === undefined ? {} : { details: fitted }),
    });
  };

  for (const campaign of campaigns) {
    const profile = providerProfiles[campaign.provider];
    const start = now - campaign.startedDaysAgo * DAY;
    const sendTimes = Array.from({ length: campaign.messages }, () =>
      campaign.kind === 'blast' ? start + random() ** 2 * 30 * HOUR : start + random() * (now - start - HOUR),
    ).sort((a, b) => a - b);
    for (const [i, sentAt] of sendTimes.entries()) {
      const recipient = `${names[i % names.length]}.${i}@${pick(domains)}`;
      const message: Message = {
        provider: campaign.provider,
        messageId: `demo-${campaign.trackingId}-${i}`,
        recipient,
        trackingId: campaign.trackingId,
      };
      if (profile.reportsSend) add(message, 'sent', sentAt);
      const roll = random();
      if (roll < campaign.rejected && profile.ownListBounce !== undefined) {
        add(message, 'rejected', sentAt + SECOND, { providerSuppression: 'bounce', details: profile.ownListBounce });
        continue;
      }
      if (roll < campaign.rejected + campaign.hardBounce) {
        add(message, 'bounced', sentAt + 3 * SECOND + random() * 30 * SECOND, {
          bounceClass: 'hard',
          details: { ...pick(hardBounceReplies)(recipient), bounceClassification: profile.hardBounce },
        });
        continue;
      }
      if (roll < campaign.rejected + campaign.hardBounce + campaign.softBounce) {
        const deferred = { details: { ...mailboxFull, bounceClassification: profile.deferral } };
        add(message, 'deferred', sentAt + 5 * SECOND + random() * 30 * SECOND, deferred);
        add(message, 'deferred', sentAt + HOUR + random() * 5 * HOUR, deferred);
        add(message, 'bounced', sentAt + 12 * HOUR + random() * 60 * HOUR, {
          bounceClass: 'soft',
          details: { ...mailboxFull, bounceClassification: profile.softBounce },
        });
        continue;
      }
      let deliveredAt = sentAt + 2 * SECOND + random() * 40 * SECOND;
      if (random() < campaign.deferral) {
        add(message, 'deferred', sentAt + 5 * SECOND + random() * MINUTE, {
          details: { ...pick(deferralReplies), bounceClassification: profile.deferral },
        });
        deliveredAt = sentAt + 10 * MINUTE + random() ** 2 * 8 * HOUR;
      }
      add(message, 'delivered', deliveredAt, { details: profile.delivered });
      if (random() < campaign.open) {
        // A newsletter is read over days; a password reset within the hour.
        const soon = campaign.kind === 'blast' ? random() < 0.5 : random() < 0.85;
        const openedAt =
          deliveredAt + (soon ? wait(campaign.kind === 'blast' ? 2 * HOUR : 40 * MINUTE) : wait(campaign.kind === 'blast' ? 3 * DAY : DAY));
        add(message, 'opened', openedAt);
        if (random() < 0.3) add(message, 'opened', openedAt + wait(DAY));
        if (random() < campaign.click) add(message, 'clicked', openedAt + 10 * SECOND + random() * 10 * MINUTE);
        if (random() < campaign.unsubscribe) add(message, 'unsubscribed', openedAt + MINUTE + random() * 5 * MINUTE);
      }
      if (random() < campaign.complaint)
        add(message, 'complained', deliveredAt + wait(1.5 * DAY), { details: { feedbackType: profile.feedbackType } });
    }
  }

  // The address the banner's check command asks about, and messages sent without a tracking ID.
  const start = now - 2 * DAY;
  const bounced: Message = {
    provider: 'sendgrid',
    messageId: 'demo-bounced',
    recipient: 'bounced@example.com',
    trackingId: 'welcome-2026-11',
  };
  add(bounced, 'sent', start);
  add(bounced, 'bounced', start + 4 * SECOND, {
    bounceClass: 'hard',
    details: { ...hardBounceReplies[0]!('bounced@example.com'), bounceClassification: providerProfiles.sendgrid.hardBounce },
  });
  // A mailbox full for a week: three welcome mails soft-bounce in five days, which the demo's rule
  // (DEMO_RULES) turns into a suppression that expires; the seed inbox's hard bounce suppresses nothing.
  for (const [i, daysAgo] of [6, 4, 1].entries()) {
    const full: Message = {
      provider: 'sendgrid',
      messageId: `demo-full-mailbox-${i}`,
      recipient: 'full-mailbox@example.com',
      trackingId: 'welcome-2026-11',
    };
    const sentAt = now - daysAgo * DAY;
    const details = { ...mailboxFull, bounceClassification: providerProfiles.sendgrid.softBounce };
    add(full, 'sent', sentAt);
    add(full, 'deferred', sentAt + 5 * SECOND, { details });
    add(full, 'bounced', sentAt + 8 * HOUR, { bounceClass: 'soft', details });
  }
  const seedInbox: Message = {
    provider: 'sendgrid',
    messageId: 'demo-seed-inbox',
    recipient: DEMO_ALLOWLISTED,
    trackingId: 'welcome-2026-11',
  };
  add(seedInbox, 'sent', start + HOUR);
  add(seedInbox, 'bounced', start + HOUR + 3 * SECOND, {
    bounceClass: 'hard',
    details: { ...hardBounceReplies[1]!(DEMO_ALLOWLISTED), bounceClassification: providerProfiles.sendgrid.hardBounce },
  });
  for (const [i, name] of ['receipts', 'billing', 'support'].entries()) {
    const untracked: Message = {
      provider: 'postmark',
      messageId: `demo-untracked-${i}`,
      recipient: `${name}@example.org`,
      trackingId: null,
    };
    add(untracked, 'delivered', start + i * HOUR, { details: providerProfiles.postmark.delivered });
  }

  await mailwarden.allowlist.add(DEMO_PROJECT, DEMO_ALLOWLISTED);
  for (let at = 0; at < events.length; at += 500) {
    await mailwarden.applyEvents(DEMO_PROJECT, events.slice(at, at + 500));
    // The memory store answers at once, so without a turn of the event loop the whole seeding runs as
    // one task: a dashboard tab left open would wait for all of it (the port is open from the start).
    await new Promise((resolve) => setImmediate(resolve));
  }
  // A list moved over from a former provider with `mailwarden suppressions import`, then addresses added by hand.
  for (const email of ['former-bounce@example.org', 'former-complaint@example.net', 'former-unsubscribe@example.com']) {
    await mailwarden.suppressions.add(DEMO_PROJECT, email, { source: 'import' });
  }
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
    `  curl -s '${base}/alerts' -H 'X-API-Key: ${apiKey}'`,
    '    (bounce and complaint rates of the last 1 000 messages: the complaint alert is firing)',
    `  curl -s -X POST '${base}/unsubscribe-links' -H 'X-API-Key: ${apiKey}' -H 'Content-Type: application/json' -d '{"email":"someone@example.com","stream":"marketing"}'`,
    '    (open its url in a browser: a one-click unsubscribe page)',
    `  curl -s '${url}/openapi.json'`,
    '',
    `Metrics for Prometheus: ${new URL(url).origin}/metrics`,
    '',
    `Post a signed test webhook as a provider would (${webhookRoutes.slice(0, -1).join(', ')} or ${webhookRoutes.at(-1)}):`,
    `  ${cli} webhooks send sendgrid --url '${url}' --type bounced --to test@example.com`,
    '',
    'Stop with Ctrl-C.',
    '',
  ].join('\n');
}
