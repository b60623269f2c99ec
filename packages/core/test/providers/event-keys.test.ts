import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  createMailwarden,
  parseBrevoWebhook,
  createMemoryStore,
  parseMailgunLegacyWebhook,
  parseMailgunWebhook,
  parseMailjetWebhook,
  parseMailerSendWebhook,
  parseMandrillWebhook,
  parsePostalWebhook,
  parsePostmarkWebhook,
  parseResendWebhook,
  parseSendGridWebhook,
  parseSesEventBridgeWebhook,
  parseSesWebhook,
  parseSparkPostWebhook,
  type DeliveryEvent,
  type Store,
} from '@mailwarden/core';
import type { StoredEvent } from '@mailwarden/core/store';

// Stored event keys deduplicate retries across releases: a key that changed would let a retry of an
// event stored before the upgrade count twice. These are the keys as they were first stored; they must
// never change, whatever moves in the receivers.

const fixture = (path: string): string => readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8');
const json = (path: string): unknown => JSON.parse(fixture(path));
const receivedAt = new Date('2026-01-01T12:00:00Z');

const eventsOf = {
  ses: () => [
    ...parseSesWebhook(json('ses/bounce-permanent.json'), { snsMessageId: '0b4a4ad5-3d4f-5c3c-9f2e-6e7b3c2d1a00' }).events,
    ...parseSesWebhook(json('ses/delivery.json'), { snsMessageId: null }).events,
    ...parseSesWebhook(json('ses/open.json')).events,
  ],
  sendgrid: () => parseSendGridWebhook(json('sendgrid/batch.crlf.json')).events,
  mailgun: () => {
    const bodies = json('mailgun/event-data.json') as Record<string, unknown>;
    const legacy = json('mailgun/legacy.json') as Record<string, [string, string][]>;
    return [
      ...parseMailgunWebhook(bodies['delivered']).events,
      ...parseMailgunWebhook(bodies['failed-permanent']).events,
      // Legacy forms carry the signed timestamp beside the event's fields.
      ...parseMailgunLegacyWebhook([...legacy['delivered']!, ['timestamp', '1767225600']]).events,
      ...parseMailgunLegacyWebhook([...legacy['clicked-colliding-variables']!, ['timestamp', '1767225600']]).events,
    ];
  },
  sparkpost: () => [
    ...parseSparkPostWebhook(json('sparkpost/all-events.json')).events.slice(0, 3),
    // No event_id: keyed by a hash of what identifies the event.
    ...parseSparkPostWebhook([
      { msys: { message_event: { type: 'delivery', rcpt_to: 'ana@example.com', timestamp: '1767225600', transmission_id: '7' } } },
    ]).events,
  ],
  postmark: () => [
    ...parsePostmarkWebhook(fixture('postmark/bounce-hard.json'), receivedAt).events,
    ...parsePostmarkWebhook(fixture('postmark/bounce-no-id-no-time.json'), receivedAt).events,
    ...parsePostmarkWebhook(fixture('postmark/click.json'), receivedAt).events,
    ...parsePostmarkWebhook(
      '{"RecordType":"Bounce","ID":9007199254740993,"Type":"HardBounce","Email":"big@example.com","MessageID":"m-1","BouncedAt":"2026-01-01T00:00:00Z"}',
      receivedAt,
    ).events,
  ],
  mandrill: () => parseMandrillWebhook(json('mandrill/events.json')).events,
  // Resend: svix-id and the recipient; without svix-id, a hash of [type, email_id, created_at, recipient, link].
  resend: () => [
    ...parseResendWebhook(json('resend/email-bounced.json'), { svixId: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' }).events,
    ...parseResendWebhook(json('resend/email-clicked.json')).events,
  ],
  // No event id: keyed by a hash of [event, MessageID (its exact digits), email, time, url].
  // Brevo: no event id; a hash of what a retry repeats, ts_epoch as sent (milliseconds or seconds).
  brevo: () => [...parseBrevoWebhook(json('brevo/hard-bounce.json')).events, ...parseBrevoWebhook(json('brevo/batch.json')).events],
  mailjet: () => [
    ...parseMailjetWebhook(fixture('mailjet/grouped.json')).events,
    ...parseMailjetWebhook(fixture('mailjet/unsub-single.json')).events,
  ],
  // MailerSend: data.id, the activity id, kept on retries; without one, a hash of what a retry repeats.
  mailersend: () => [
    ...parseMailerSendWebhook(json('mailersend/v2-sent.json')).events,
    ...parseMailerSendWebhook(json('mailersend/v1-hard-bounced.json')).events,
    ...parseMailerSendWebhook({
      type: 'activity.delivered',
      created_at: '2026-01-01T12:00:00.000000Z',
      data: { type: 'delivered', recipient: 'ana@example.com', message_id: '6aa59d2fbf35297925087058', meta: [] },
    }).events,
  ],
  // Postal: the envelope uuid, the same on every attempt; without one, a hash of what a retry repeats.
  postal: () => [
    ...parsePostalWebhook(fixture('postal/message-delivery-failed.json')).events,
    ...parsePostalWebhook(fixture('postal/message-link-clicked.json')).events,
    ...parsePostalWebhook(fixture('postal/message-sent.json').replace(/"uuid":"[^"]*",/, '')).events,
  ],
  // SES through EventBridge: keyed by the SES event itself, as SNS raw deliveries are, so the same SES
  // event is stored under the same key whichever of these routes brought it.
  'ses-eventbridge': () => [
    ...parseSesEventBridgeWebhook({ source: 'aws.ses', 'detail-type': 'Email Delivered', detail: json('ses/delivery.json') }).events,
    ...parseSesEventBridgeWebhook({ source: 'aws.ses', 'detail-type': 'Email Opened', detail: json('ses/open.json') }).events,
  ],
} satisfies Record<string, () => DeliveryEvent[]>;

/** The stored keys of `eventsOf`, as first stored (the receivers' event keys behind `<provider>:`). */
const storedKeys: Record<keyof typeof eventsOf, string[]> = {
  mailgun: [
    'mailgun:d54210f352451f822af7af3bf4f1f8c35c6b1b3e9fb5f9f79ae53ca67335e418',
    'mailgun:8128ceaf842e0f48dd424756ba7cd4aad403380705710c3aed4d9a789d3e4ffd',
    'mailgun:71b846b1684d2f241df9c209f85c6dee388d74b101451c38ffbee996d464a92e',
    'mailgun:1f80d693df95617bc4e9690f5d938b9d4ef6972cd242b533c481c30c31a047dc',
  ],
  brevo: [
    'brevo:c57344f37e895a3dae3d3782be4df77ea663f73c5882042f406813e3f5a84ec7',
    'brevo:43ef35d9a03fa7c1489df92c2c411d6d621a32d8090f55e1ffa7890ebaa5c9e9',
    'brevo:b51d96dc2f3f9ebee382b5404b86548c32377d5d9615896bc8b6637fc3e4b9c8',
    'brevo:122ba86ee30821a1a9ee840bff6cdbb13f9c42c4a46bdbfc8b0b42624369cc02',
    'brevo:1ad369503f3c6ff486353a9294c72cc4e0996728912b4f0b34a15467b31829d5',
  ],
  mailjet: [
    'mailjet:f535924c67685fc8d2839c2606dadfec83d8255c00c6a1033f572cfdde9931dc',
    'mailjet:a6449cb83626f5e4c44244a4f62eedda6e00df8b683ef290bc214c7bcba54aeb',
    'mailjet:9245ee66fa2b94c02aaa87fe6514fea2dd4c6c9c793947bf545e3e252707b72f',
    'mailjet:6c55cb6ddca3cdc943fda650f011d3b6e7ae5aab1eca5a11e307b1e47f4ccbea',
    'mailjet:2b4f2660af646d36ac036b9487370ce6d6834d9b074ad7ac669b5a9c212a988b',
  ],
  mandrill: [
    'mandrill:66377766f69597611372e50bba23dd7ae6f84ec346f72d4053cc741ced64a4b6',
    'mandrill:9f0cd1fa92b40c9fa265d779890458c573d1b9a240202f5ff2588c0bde014311',
    'mandrill:b36423664e0505368a7be1457594acf3eaa29b5a0f608e5202996e8865ace822',
    'mandrill:5d3f8bf4278cca768a35ed889b2c2322c622d26dcf5415e2902799d229677486',
    'mandrill:021074e8bc34082f7d40393181c5a9d0bd4fead8b884bfe6f3acac6ca2733dd8',
    'mandrill:4b623973946e2e1d2cf396ba46d34e51b0a9ec38f2e4912a0eb298b0e08498ed',
    'mandrill:0ae3f6b6f00ad219d9825e3e20b89be08da8ea7b933b6390e52f99ec0f956304',
    'mandrill:2f5dcf31b6cda3d5c47249af321372e5e62e4e9a24e94346275f3275d382554e',
    'mandrill:890851d6a0d699d15747aac1f397783206c80e539f8d71e95e557eade1b7d122',
    'mandrill:cb60d91e231d3c8236d9a5188285ebc4a8cbe6ba4049205b292a93a105799c4f',
    'mandrill:a52df35dd257e9f540b451c04e19bf9cd2b552f009bd6dfcff41488ae544a788',
  ],
  resend: [
    'resend:msg_2KWPBgLlAfxdpx2AI54pPJ85f4W:x@example.org',
    'resend:e6f58e891cd7825ee55bd66984fc38fc75b209d62f3e196158e0d6e363d54517',
  ],
  mailersend: [
    'mailersend:6aa59d304ab3f14ef03ccf50',
    'mailersend:63fd251d5c00f8e52001fce6',
    'mailersend:5dfbe99fcbec3ff22d69ab13707bad6d27b5217609b93415217dd59c8bf611af',
  ],
  postal: [
    'postal:8c1d5a3e-4f7b-4c2a-9a51-6f3e2d1b0c9a',
    'postal:7e8f9001-1223-4d4e-a5f6-0718293a4b5c',
    'postal:f766ffd1a176edda2ee8b94aed0579e8ad3fb90d94d68da9d11546de5cbf8432',
  ],
  postmark: [
    'postmark:Bounce:4323372036854775807',
    'postmark:e23eec77c45c80df9cbd2612c751fcf3f0925b26c577f61fa2ce99e9a1f896e3',
    'postmark:6d4be86f903505239d39d7f8698a26ea29aeceaf326c322e2381cf852184c531',
    'postmark:Bounce:9007199254740993',
  ],
  sendgrid: [
    'sendgrid:cf25280f5defdbc603c5b5860accf6764d32cb4543d06daf5a8d3255298e3cc4',
    'sendgrid:a6e4e2e71b872ede357b27cf0d9983850b219315083bab344cc20b52f3b6e938',
    'sendgrid:6bbc4da7243bd15f91d0e4be95bf7a4daa302363943d8bce4b4050e052a30e82',
    'sendgrid:142cc33f10f71a29e1dbb0905416018c69732bfac59d5f9a231092da4d07e537',
    'sendgrid:4261fbdec9813264d4d5feaa50693062a93bc09dfdf524836b3ce1d6870d4664',
    'sendgrid:22e930039fff4e3eaca55f986637698d1d39ea2a072de4ddff5b3a51ecf9b56c',
    'sendgrid:96833ce63a081b633081faa8b2614a8e12d56263d8522c16612a1115138f7b59',
    'sendgrid:016fc25677249487e7f71176949fa0decc6e717c66ca2e3b32eeed9f103b8c99',
    'sendgrid:d059e805e1f9a2b11dbe5a8f7b81b11e0505d30231ec77d8b19aa6c1c3dbc081',
    'sendgrid:1a3d92cd88662747d65bf85d0f76412c54750b22e729240738f24d9a84f2b3ad',
    'sendgrid:26c70ecb3263b9b10c611866440dece27974da20cb1bd05ca323770d964a4bbc',
    'sendgrid:70b04102bd35cb45cb5f0c153d19f992d9eb0fc658818e9eeb04c64818cd3022',
    'sendgrid:f043be007ea85b3737c034b17c16d4129d15f94073eb5dfe145212a4cfad1e80',
    'sendgrid:aaf878e190854bed7ccfc2173ce75b003d1e3db596823083e090f8daaf20eeef',
    'sendgrid:7f421813578d42adc5249541fb75ed2652c9ca8497f46424adb7dcf47981f2d3',
    'sendgrid:7d0a307366a5c38f8979136ada76cde8e808fd26d15c24f05cbabd5f6d61ef53',
  ],
  ses: [
    'ses:0b4a4ad5-3d4f-5c3c-9f2e-6e7b3c2d1a00:ana@example.org',
    'ses:0b4a4ad5-3d4f-5c3c-9f2e-6e7b3c2d1a00:Bo@Example.org',
    'ses:dce0f39cb28da52bb55ca42b67ec8032be464b9b57b1bdf327b0815c88639d28',
    'ses:e734cd638b138b469e3cabec6a22501fa3f6ca29f1aed855d43a9fced6b0a871',
    'ses:7d9656131c633a4e452970a896ad61b0f153e6e5c35e9c7e2d6841cb8f922d26',
    'ses:d2386dffea22eb3bb6a9e2ccd7388031fc14c9af958acc0eed3f93397b692468',
    'ses:69151e1b0efb75b9f8caf27fc4cf3f42dad0df9631a2b6e7cdce87e53dae780f',
  ],
  'ses-eventbridge': [
    'ses:dce0f39cb28da52bb55ca42b67ec8032be464b9b57b1bdf327b0815c88639d28',
    'ses:e734cd638b138b469e3cabec6a22501fa3f6ca29f1aed855d43a9fced6b0a871',
    'ses:7d9656131c633a4e452970a896ad61b0f153e6e5c35e9c7e2d6841cb8f922d26',
    'ses:d2386dffea22eb3bb6a9e2ccd7388031fc14c9af958acc0eed3f93397b692468',
    'ses:69151e1b0efb75b9f8caf27fc4cf3f42dad0df9631a2b6e7cdce87e53dae780f',
  ],
  sparkpost: [
    'sparkpost:92356927693813850',
    'sparkpost:92356927693813851',
    'sparkpost:92356927693813852',
    'sparkpost:03f24d317f99111f9e2f473c4067338a8766ab2abdbf01584a017d3acd5b8861',
  ],
};

/** A memory store that also records the key of every event handed to it. */
function recordingStore(keys: string[]): Store {
  const memory = createMemoryStore();
  return new Proxy(memory, {
    get(target, name, receiver) {
      if (name === 'applyEvents') {
        return (projectId: string, events: readonly StoredEvent[]) => {
          keys.push(...events.map((event) => event.key));
          return target.applyEvents(projectId, events);
        };
      }
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('stored event keys', () => {
  it.each(Object.keys(eventsOf) as (keyof typeof eventsOf)[])('%s', async (provider) => {
    const events = eventsOf[provider]();
    const keys: string[] = [];
    const mailwarden = createMailwarden({ store: recordingStore(keys) });
    await mailwarden.applyEvents('acme', events);
    expect(events.map((event) => `${event.provider}:${event.eventKey}`)).toEqual(storedKeys[provider]);
    expect(keys).toEqual(storedKeys[provider]);
  });
});
