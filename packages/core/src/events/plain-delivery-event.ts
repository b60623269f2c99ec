import { storableTextProblem } from '../storable-text.js';
import {
  bounceClasses,
  deliveryEventTypes,
  eventDetailLimits,
  eventIdLimits,
  isSmtpStatus,
  providers,
  providerSuppressions,
  type DeliveryEvent,
  type EventDetails,
} from './delivery-event.js';

const PROVIDERS = new Set<unknown>(providers);
const TYPES = new Set<unknown>(deliveryEventTypes);
const BOUNCE_CLASSES = new Set<unknown>(bounceClasses);
const PROVIDER_SUPPRESSIONS = new Set<unknown>(providerSuppressions);
const DETAIL_NAMES = Object.keys(eventDetailLimits) as (keyof EventDetails)[];

/**
 * What `deliveryEventSchema.safeParse(input).data` is for an event that plainly passes the schema (as
 * every receiver's events do), built as zod builds it: the schema's keys in the schema's order, an
 * optional key only when the input has it. `undefined` for anything else, valid or not, which the schema
 * then judges and words the warning for. Zod took more than a microsecond an event, as much as storing
 * a duplicate; a property test holds this to the schema.
 */
export function plainDeliveryEvent(input: unknown): DeliveryEvent | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const event = input as Record<string, unknown>;
  const {
    provider,
    type,
    bounceClass,
    providerSuppression,
    messageId,
    recipient,
    trackingId,
    stream,
    occurredAt,
    eventKey,
    details,
    description,
  } = event;
  if (!PROVIDERS.has(provider) || !TYPES.has(type)) return undefined;
  if (bounceClass != null && !BOUNCE_CLASSES.has(bounceClass)) return undefined;
  if (providerSuppression != null && !PROVIDER_SUPPRESSIONS.has(providerSuppression)) return undefined;
  if (messageId !== null && !isStorableText(messageId, eventIdLimits.messageId)) return undefined;
  if (typeof recipient !== 'string' || (trackingId !== null && typeof trackingId !== 'string')) return undefined;
  if (stream != null && typeof stream !== 'string') return undefined;
  if (!(occurredAt instanceof Date) || Number.isNaN(occurredAt.getTime())) return undefined;
  if (!isStorableText(eventKey, eventIdLimits.eventKey)) return undefined;
  if (description !== undefined && typeof description !== 'string') return undefined;
  const plainDetails = details === undefined ? undefined : plainEventDetails(details);
  if (details !== undefined && plainDetails === undefined) return undefined;

  const parsed: Record<string, unknown> = { provider, type };
  if ('bounceClass' in event) parsed['bounceClass'] = bounceClass;
  if ('providerSuppression' in event) parsed['providerSuppression'] = providerSuppression;
  parsed['messageId'] = messageId;
  parsed['recipient'] = recipient;
  parsed['trackingId'] = trackingId;
  if ('stream' in event) parsed['stream'] = stream;
  parsed['occurredAt'] = occurredAt;
  parsed['eventKey'] = eventKey;
  if ('details' in event) parsed['details'] = plainDetails;
  if ('description' in event) parsed['description'] = description;
  return parsed as unknown as DeliveryEvent;
}

/** `eventDetailsSchema`'s output for plain details (a plain object of known names), else `undefined`. */
function plainEventDetails(input: unknown): EventDetails | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const prototype = Object.getPrototypeOf(input) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  const details = input as Record<string, unknown>;
  for (const name of Object.keys(details)) if (!Object.hasOwn(eventDetailLimits, name)) return undefined;
  const parsed: Record<string, unknown> = {};
  for (const name of DETAIL_NAMES) {
    if (!(name in details)) continue;
    const value = details[name];
    if (value !== undefined && (!isStorableText(value, eventDetailLimits[name]) || (name === 'smtpStatus' && !isSmtpStatus(value))))
      return undefined;
    parsed[name] = value;
  }
  return parsed as EventDetails;
}

function isStorableText(value: unknown, maxLength: number): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= maxLength && storableTextProblem(value) === undefined;
}
