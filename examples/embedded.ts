// Embeds mailwarden on the memory store and walks through what a mail sender does with it:
// suppress, gate a send, record the provider's delivery events, and read the results back.
import { createMailwarden, type DeliveryEvent } from '@mailwarden/core';

const project = 'demo';
const mailwarden = createMailwarden();

const say = (title: string, value: unknown) => console.log(`\n# ${title}\n${JSON.stringify(value, null, 2)}`);

// 1. Someone asks not to be mailed again.
const { suppression, created } = await mailwarden.suppressions.add(project, 'Opted.Out@Example.com');
say('add a manual suppression', { suppression, created });

// 2. Before sending a campaign, drop suppressed and invalid recipients.
const recipients = ['alice@example.com', 'bob@example.com', 'opted.out@example.com', 'not-an-address'];
say('gate the send', await mailwarden.filterSuppressed(project, recipients));

// 3. The provider reports back (these are what the webhook parsers produce).
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 9, minute));
const event = (fields: Partial<DeliveryEvent> & Pick<DeliveryEvent, 'type' | 'recipient' | 'eventKey'>): DeliveryEvent => ({
  provider: 'sendgrid',
  messageId: `msg-${fields.recipient}`,
  trackingId: 'newsletter-2026-11',
  occurredAt: at(1),
  ...fields,
});
const events: DeliveryEvent[] = [
  event({ type: 'delivered', recipient: 'alice@example.com', eventKey: 'e1', occurredAt: at(1) }),
  event({ type: 'opened', recipient: 'alice@example.com', eventKey: 'e2', occurredAt: at(5) }),
  event({ type: 'bounced', bounceClass: 'hard', recipient: 'bob@example.com', eventKey: 'e3', occurredAt: at(2) }),
];
say('apply delivery events', await mailwarden.applyEvents(project, events));
say('the provider retries one of them', await mailwarden.applyEvents(project, [events[0]!]));

// 4. Read back: the hard bounce suppressed bob, and the campaign has its counters.
say('check bob', await mailwarden.suppressions.check(project, 'bob@example.com'));
say('tracking IDs matching "NEWS"', await mailwarden.trackingIds.list(project, { search: 'NEWS' }));
say('messages of the campaign', await mailwarden.messages.list(project, { trackingId: 'newsletter-2026-11' }));
say('the suppression list', await mailwarden.suppressions.list(project, { limit: 10 }));

await mailwarden.close();
