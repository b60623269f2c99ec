import type { MailwardenContext } from './context.js';
import { tryNormalizeEmail } from '../email/normalize.js';
import { assertProjectId } from '../input.js';
import { eventHookCalls } from './hooks.js';
import { factsOf } from '../messages/facts.js';
import { messageKey } from '../messages/message.js';
import { timelineEntryId, type TimelineEntry } from '../messages/timeline.js';
import { deliveryEventSchema, type ApplyEventsResult, type EventWarning } from '../api-schemas.js';
import type { ApplyEventsOptions, EventOutcome, StoredEvent, StoredSoftBounceRule, SuppressionRecord } from '../store/store.js';
import { packRuleBounce, type SuppressionCause } from '../suppressions/provenance.js';
import { ruleExpiresAt, storedSoftBounceRule, type SuppressionRules } from '../suppressions/rules.js';
import type { SuppressionDecision } from '../suppressions/policy.js';
import { checkTrackingId, trackingIdSearchKey } from '../tracking-id.js';
import { eventDetails, personalDetails, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { plainDeliveryEvent } from '../events/plain-delivery-event.js';
import { isStreamName } from '../stream.js';
import { webhookActor } from '../store/actor.js';

/**
 * Records normalized events: dedup by event key, message-state merge, per-tracking-ID counters and
 * automatic suppression, each event atomically in the store. A malformed event is skipped and reported;
 * the rest are applied. Safe to retry: an event already applied counts as a duplicate.
 */
export async function applyEvents(
  context: MailwardenContext,
  projectId: string,
  events: readonly DeliveryEvent[],
): Promise<ApplyEventsResult> {
  assertProjectId(projectId);
  const warnings: EventWarning[] = [];
  const stored: StoredEvent[] = [];
  // The events as recorded, for the hooks: built only when the app has hooks.
  const recorded: DeliveryEvent[] | undefined = context.hooks === undefined ? undefined : [];
  const rules = context.rules?.(projectId);
  const softBounces = storedRuleOf(rules);
  events.forEach((event, index) => {
    const prepared = prepareEvent(context, projectId, event, index, warnings, recorded, rules, softBounces);
    if (prepared !== undefined) stored.push(prepared);
  });
  // Always the clock: a record may expire without any rule (an add's `expires_at`), and a store
  // given `now` alone changes nothing it stores (docs/decisions.md, "Suppressions that expire").
  const now = Math.trunc(context.now());
  const options: ApplyEventsOptions = softBounces === undefined ? { now } : { now, softBounces };
  // Only when the project has alert rules: without them no window is read or written (docs/core.md, "Alerts").
  const alerts = context.alerts?.(projectId);
  if (alerts !== undefined) options.alerts = alerts;
  const outcomes = stored.length === 0 ? [] : await context.store.applyEvents(projectId, stored, options);
  if (context.hooks !== undefined) notifyEventHooks(context, projectId, recorded!, stored, outcomes, now);
  const accepted = outcomes.filter((outcome) => outcome !== 'duplicate').length;
  return { accepted, duplicates: outcomes.length - accepted, skipped: events.length - stored.length, warnings };
}

/**
 * The hooks of one call: as they are when no event's outcome came from the soft-bounce rule; else
 * once the rule's records are read back (one round trip, after the answer is on its way).
 */
function notifyEventHooks(
  context: MailwardenContext,
  projectId: string,
  recorded: readonly DeliveryEvent[],
  stored: readonly StoredEvent[],
  outcomes: readonly EventOutcome[],
  now: number,
): void {
  const hooks = context.hooks!;
  const ruleMade: number[] = [];
  if (hooks.wants.suppressed) {
    outcomes.forEach((outcome, index) => {
      const event = stored[index]!;
      if (outcome !== 'duplicate' && outcome !== 'applied' && event.suppression === null && event.ruleInput !== undefined)
        ruleMade.push(index);
    });
  }
  if (ruleMade.length === 0) {
    hooks.notify(eventHookCalls(hooks.wants, projectId, recorded, stored, outcomes));
    return;
  }
  const hashes = ruleMade.map((index) => stored[index]!.ruleInput!.hash);
  hooks.notifyLater(
    context.store.getSuppressions(projectId, hashes, undefined, now).then((records) => {
      const ruleRecords = new Map(ruleMade.map((index, i) => [index, records[i]]));
      return eventHookCalls(hooks.wants, projectId, recorded, stored, outcomes, ruleRecords);
    }),
  );
}

/** `storedSoftBounceRule`, once per rules object: the service sends the same object with every batch. */
const storedRules = new WeakMap<SuppressionRules, StoredSoftBounceRule | undefined>();
function storedRuleOf(rules: SuppressionRules | undefined): StoredSoftBounceRule | undefined {
  if (rules?.softBounces === undefined) return undefined;
  if (!storedRules.has(rules)) storedRules.set(rules, storedSoftBounceRule(rules));
  return storedRules.get(rules);
}

function prepareEvent(
  context: MailwardenContext,
  projectId: string,
  input: DeliveryEvent,
  index: number,
  warnings: EventWarning[],
  recorded: DeliveryEvent[] | undefined,
  rules: SuppressionRules | undefined,
  softBounces: StoredSoftBounceRule | undefined,
): StoredEvent | undefined {
  let event = plainDeliveryEvent(input);
  if (event === undefined) {
    // Anything but a plain event: the schema decides, and words the warning.
    const parsed = deliveryEventSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      warnings.push({ index, code: 'invalid_event', message: `${issue.path.join('.') || 'event'}: ${issue.message}` });
      return undefined;
    }
    event = parsed.data as DeliveryEvent;
  }
  const recipient = tryNormalizeEmail(event.recipient);
  if (!recipient.ok) {
    warnings.push({ index, code: 'invalid_recipient', message: `recipient: ${recipient.reason}` });
    return undefined;
  }
  let trackingId: string | null = null;
  const tracking = checkTrackingId(event.trackingId);
  if (tracking.ok) trackingId = tracking.trackingId;
  else {
    // The event still counts; only the ID is dropped (docs/decisions.md#what-a-tracking-id-is).
    const code = tracking.problem === 'too_long' ? 'tracking_id_too_long' : 'invalid_tracking_id';
    warnings.push({ index, code, message: `${tracking.reason}; the event was recorded without it` });
  }
  // A stream that is no stream name is dropped the same way: the event still counts.
  const stream = isStreamName(event.stream) ? event.stream : null;
  if (stream === null && event.stream != null) {
    warnings.push({ index, code: 'invalid_stream', message: 'stream is not a stream name; the event was recorded without it' });
  }

  // As recorded: the stream only when the event had one, and then as kept (`null` once dropped).
  const kept: DeliveryEvent = { ...event, recipient: recipient.email, trackingId, ...(event.stream == null ? {} : { stream }) };
  recorded?.push(kept);
  const at = event.occurredAt.getTime();
  const facts = factsOf(event);
  const decision = context.policy(kept);
  const key = `${event.provider}:${event.eventKey}`;
  const messageOf = event.messageId === null || facts === 0 ? null : messageKey(event.provider, event.messageId, recipient.email);
  const suppression = decision === null ? null : suppressionOf(context, projectId, event, kept, decision, key);
  if (suppression !== null && rules !== undefined) {
    const expiresAt = ruleExpiresAt(rules, suppression);
    if (expiresAt !== undefined) suppression.expiresAt = expiresAt;
  }
  const storedEvent: StoredEvent = {
    key,
    message:
      messageOf === null || event.messageId === null
        ? null
        : {
            key: messageOf,
            provider: event.provider,
            messageId: event.messageId,
            recipient: recipient.email,
            trackingId,
            stream,
            facts,
            firstEventAt: at,
            lastEventAt: at,
          },
    trackingIdSearchKey: trackingId === null ? null : trackingIdSearchKey(trackingId),
    suppression,
    ...(event.messageId === null || facts === 0 ? {} : { timelineEntry: timelineEntryOf(context, event, key) }),
    // The audit trail's name for what the provider reported (docs/decisions.md, "The audit trail").
    actor: webhookActor(event.provider, event.type),
  };
  if (softBounces !== undefined) {
    if (event.type === 'bounced' && event.bounceClass === 'soft') {
      const cause: SuppressionCause = {
        provider: event.provider,
        messageId: event.messageId,
        eventId: timelineEntryId(key),
        diagnostic: causeDiagnostic(event),
      };
      storedEvent.ruleInput = {
        kind: 'soft_bounce',
        hash: suppression?.hash ?? context.hashEmail(recipient.email),
        email: recipient.email,
        at,
        // Bounces of one message count once; an event naming no message is a message of its own.
        message: messageOf ?? key,
        cause,
        packed: packRuleBounce(cause, at),
        causeJson: JSON.stringify([cause.provider, cause.messageId, cause.diagnostic]),
      };
    } else if (event.type === 'delivered' && softBounces.resetOnDelivery) {
      storedEvent.ruleInput = { kind: 'delivery', hash: context.hashEmail(recipient.email), at };
    }
  }
  return storedEvent;
}

/**
 * The suppression an event's decision stores: a reason on the project-wide list, source `webhook`; or
 * the recipient's unsubscribe, reason `manual` and source `unsubscribe`, in the list of the event's kept
 * stream, else the project's default stream, else project-wide (docs/decisions.md, "Who suppresses on
 * an unsubscribe"). Either way the event is its cause.
 */
function suppressionOf(
  context: MailwardenContext,
  projectId: string,
  event: DeliveryEvent,
  kept: DeliveryEvent,
  decision: NonNullable<SuppressionDecision>,
  key: string,
): SuppressionRecord {
  const at = event.occurredAt.getTime();
  const unsubscribe = decision === 'unsubscribe';
  const stream = unsubscribe ? (kept.stream ?? context.defaultStream?.(projectId)) : undefined;
  return {
    hash: context.hashEmail(kept.recipient),
    email: kept.recipient,
    reason: unsubscribe ? 'manual' : decision,
    createdAt: at,
    provenance: {
      source: unsubscribe ? 'unsubscribe' : 'webhook',
      at,
      event: {
        provider: event.provider,
        messageId: event.messageId,
        eventId: timelineEntryId(key),
        diagnostic: causeDiagnostic(event),
      },
    },
    ...(stream == null ? {} : { stream }),
  };
}

/** What a suppression's cause said: the complaint's feedback type, else the SMTP reply (or status, or reject reason). */
function causeDiagnostic(event: DeliveryEvent): string | null {
  const details = event.details ?? {};
  if (event.type === 'complained') return details.feedbackType ?? null;
  const description = event.description === undefined ? undefined : eventDetails({ diagnostic: event.description })?.diagnostic;
  return details.diagnostic ?? description ?? details.smtpStatus ?? details.rejectReason ?? null;
}

/** The event as its message's timeline keeps it: personal details only when the instance opts in. */
function timelineEntryOf(context: MailwardenContext, event: DeliveryEvent, key: string): TimelineEntry {
  const details: EventDetails = { ...event.details };
  // One concept: the deprecated description is the diagnostic.
  if (details.diagnostic === undefined && event.description !== undefined) {
    const diagnostic = eventDetails({ diagnostic: event.description })?.diagnostic;
    if (diagnostic !== undefined) details.diagnostic = diagnostic;
  }
  if (context.timelinePersonalData !== true) for (const name of personalDetails) delete details[name];
  return {
    id: timelineEntryId(key),
    eventKey: event.eventKey,
    type: event.type,
    provider: event.provider,
    occurredAt: event.occurredAt.getTime(),
    ...(event.bounceClass == null ? {} : { bounceClass: event.bounceClass }),
    ...(event.providerSuppression == null ? {} : { providerSuppression: event.providerSuppression }),
    ...details,
  };
}
