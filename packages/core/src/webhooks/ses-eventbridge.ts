import { MailwardenError } from '../errors.js';
import { isRecord, stringField } from '../json/record.js';
import { checkSharedSecret, type SharedSecretAuth } from './auth.js';
import { bodyJson } from './body.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { noticeReceipt, type WebhookReceipt } from './receipt.js';
import { parseSesWebhook } from './ses.js';

/**
 * SES event publishing through EventBridge is not signed: the API destination's connection adds Basic
 * credentials, an API-key header or an OAuth bearer token (docs/providers/ses-eventbridge.md#authentication).
 */
export type SesEventBridgeWebhookAuth = SharedSecretAuth;

/** The `detail-type`s of SES's email events; SES also puts account events (advisor, sending status) on the bus. */
const EMAIL_DETAIL_TYPE = /^Email /;

/**
 * Normalizes one EventBridge event from SES (`source: aws.ses`), as an API destination posts it: the whole
 * event, whose `detail` is the SES event-publishing record SNS carries in its `Message`, parsed by the SES
 * receiver's own parser (one place for the SES mapping, carriers and stream). A body that is the SES record
 * itself (a rule's input transformer `$.detail`) is taken too. SES's events that are not about email are
 * a ping. Events are keyed by the SES event's own identity, as SNS raw deliveries are, not by the envelope
 * `id`: the same SES event is a duplicate whichever of these it came by (docs/providers/ses-eventbridge.md#event-keys).
 * Throws `invalid_payload` for a body that is neither.
 *
 * @example
 * const receipt = parseSesEventBridgeWebhook(JSON.parse(body));
 */
export function parseSesEventBridgeWebhook(payload: unknown): WebhookReceipt {
  if (!isRecord(payload)) throw new MailwardenError('invalid_payload', 'An EventBridge event is a JSON object.');
  if (!Object.hasOwn(payload, 'detail') && (Object.hasOwn(payload, 'eventType') || Object.hasOwn(payload, 'notificationType'))) {
    return parseSesWebhook(payload, { snsMessageId: null });
  }
  const source = stringField(payload, 'source');
  if (source !== 'aws.ses') {
    throw new MailwardenError('invalid_payload', `The EventBridge event's source is ${JSON.stringify(source ?? null)}, not "aws.ses".`);
  }
  const detailType = stringField(payload, 'detail-type');
  if (detailType === undefined) throw new MailwardenError('invalid_payload', 'The EventBridge event has no detail-type.');
  if (!EMAIL_DETAIL_TYPE.test(detailType)) return noticeReceipt('ping');
  if (!isRecord(payload.detail)) throw new MailwardenError('invalid_payload', `The "${detailType}" event has no detail object.`);
  return parseSesWebhook(payload.detail, { snsMessageId: null });
}

/**
 * The receiver of SES events through an EventBridge API destination: checks the connection's Basic
 * credentials, API-key header or bearer token (there is no signature), then parses the JSON body.
 *
 * @example
 * const ses = createSesEventBridgeWebhook(env);
 * const receipt = await ses.receive(request, { headers: [{ name: 'x-api-key', value: secret }] });
 */
export function createSesEventBridgeWebhook(_env: WebhookEnvironment): ProviderWebhook<SesEventBridgeWebhookAuth> {
  return {
    provider: 'ses',
    async receive(request, auth) {
      checkSharedSecret(request, auth);
      return parseSesEventBridgeWebhook(bodyJson(request.rawBody));
    },
  };
}

/** A Basic connection can authenticate: a 401 names the scheme. */
export const sesEventBridgeWebhookDefinition: ProviderWebhookDefinition<SesEventBridgeWebhookAuth> = {
  basicChallenge: true,
  createReceiver: createSesEventBridgeWebhook,
};
