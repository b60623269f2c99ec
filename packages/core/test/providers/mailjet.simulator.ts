import { mailjetMessageIdDigits, mailjetRequest } from '../../src/testing/mailjet.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';

/** What Mailjet's Send API v3.1 answers with a 400 instead of sending. */
export class MailjetRefusal extends Error {}

export interface MailjetDeliveryOptions {
  /** Which event reports each recipient. */
  event: 'sent' | 'bounce' | 'unsub';
  /** `true`: one array for every recipient (version 2, grouped); `false`: one bare object per POST (version 1). */
  grouped: boolean;
  /** Mailjet's serializer is not known to keep UTF-8 or escape it: both forms are valid JSON. */
  escapeNonAscii: boolean;
  /** The basic credentials of the webhook URL. */
  credentials: { username: string; password: string };
}

export interface MailjetPost {
  request: WebhookRequest;
  /** `MessageID` of each event in the POST, in order, as Mailjet wrote it (digits, above 2^53). */
  messageIds: string[];
}

/**
 * Plays Mailjet: validates a Send API v3.1 body (`{ Messages: [...] }`) as far as the carrier is concerned
 * (`EventPayload` and `CustomID` strings, `Headers` an object without the `X-MJ-*` fields v3.1 forbids
 * there), sends one message per `To` recipient, and posts one event per recipient with `EventPayload` and
 * `CustomID` echoed verbatim as `Payload` and `CustomID`, `MessageID` as a bare integer.
 */
export function deliverMailjetMessages(body: unknown, options: MailjetDeliveryOptions): MailjetPost[] {
  if (!isPlainObject(body) || !Array.isArray(body['Messages'])) throw new MailjetRefusal('Messages is required');
  const items: { text: string; messageId: string }[] = [];
  body['Messages'].forEach((message: unknown, index) => {
    if (!isPlainObject(message)) throw new MailjetRefusal(`Messages[${index}] is not an object`);
    const payload = message['EventPayload'] ?? '';
    const customId = message['CustomID'] ?? '';
    if (typeof payload !== 'string') throw new MailjetRefusal(`Messages[${index}].EventPayload must be a string`);
    if (typeof customId !== 'string') throw new MailjetRefusal(`Messages[${index}].CustomID must be a string`);
    const headers = message['Headers'];
    if (headers !== undefined && !isPlainObject(headers)) throw new MailjetRefusal(`Messages[${index}].Headers must be an object`);
    if (Object.keys(headers ?? {}).some((name) => /^x-mj-(eventpayload|customid)$/i.test(name))) {
      throw new MailjetRefusal('X-MJ-EventPayload and X-MJ-CustomID are not allowed in Headers');
    }
    const to = message['To'];
    if (!Array.isArray(to) || to.length === 0) throw new MailjetRefusal(`Messages[${index}].To is required`);
    for (const recipient of to) {
      if (!isPlainObject(recipient) || typeof recipient['Email'] !== 'string') throw new MailjetRefusal('To[].Email is required');
      const messageId = mailjetMessageIdDigits();
      const event = {
        event: options.event,
        time: 1767225600,
        MessageID: '__MESSAGE_ID__',
        Message_GUID: '1ab23cd4-e567-8901-2345-6789f0123456',
        email: recipient['Email'],
        mj_campaign_id: 0,
        mj_contact_id: 0,
        customcampaign: '',
        CustomID: customId,
        Payload: payload,
        ...(options.event === 'bounce'
          ? { blocked: true, hard_bounce: true, error_related_to: 'recipient', error: 'user unknown', comment: '550 5.1.1 User unknown' }
          : options.event === 'unsub'
            ? { mj_list_id: 1, ip: '192.0.2.1', geo: 'US', agent: 'Mozilla/5.0' }
            : { mj_message_id: messageId, smtp_reply: '250 2.0.0 OK' }),
      };
      let text = JSON.stringify(event).replace('"__MESSAGE_ID__"', messageId);
      if (options.escapeNonAscii)
        text = text.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
      items.push({ text, messageId });
    }
  });
  const basic = { basic: options.credentials };
  if (options.grouped) {
    return [
      {
        request: mailjetRequest(`[${items.map((item) => item.text).join(',')}]`, [], basic),
        messageIds: items.map((item) => item.messageId),
      },
    ];
  }
  return items.map((item) => ({ request: mailjetRequest(item.text, [], basic), messageIds: [item.messageId] }));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
