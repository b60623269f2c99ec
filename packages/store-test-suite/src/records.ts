import { randomBytes, randomUUID } from 'node:crypto';
import { providers, type Provider, type SuppressionReason } from '@mailwarden/core';
import {
  createEmailHasher,
  messageKey,
  packRuleBounce,
  storedSoftBounceRule,
  timelineEntryId,
  trackingIdSearchKey,
  type MessageRecord,
  type StoredEvent,
  type StoredSoftBounceRule,
  type SuppressionCause,
  type SuppressionRecord,
  type SuppressionRules,
} from '@mailwarden/core/store';

const hashEmail = createEmailHasher();

/** 2025-01-01T00:00:00Z: example times are small offsets from it, in seconds. */
export const T0 = Date.UTC(2025, 0, 1);

export function at(seconds: number): number {
  return T0 + seconds * 1000;
}

/** A fixed-length array type, so `const [a, b] = addresses(2)` needs no non-null assertions. */
type Tuple<T, N extends number, Items extends T[] = []> = N extends 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12
  ? Items['length'] extends N
    ? Items
    : Tuple<T, N, [...Items, T]>
  : T[];

export interface Address {
  email: string;
  hash: string;
}

/** Fresh addresses, sorted by hash, so a test can state the `hash asc` tie-break by index. */
export function addresses<N extends number>(count: N): Tuple<Address, N> {
  return Array.from({ length: count }, () => {
    const email = `${randomUUID()}@example.com`;
    return { email, hash: hashEmail(email) };
  }).sort((a, b) => (a.hash < b.hash ? -1 : 1)) as Tuple<Address, N>;
}

export function suppression(address: Address, reason: SuppressionReason, createdAt: number): SuppressionRecord {
  return { hash: address.hash, email: address.email, reason, createdAt };
}

export type MessageIdentity = Pick<MessageRecord, 'key' | 'provider' | 'messageId' | 'recipient'>;

/** Fresh messages, sorted by key, so a test can state the `key asc` tie-break by index. */
export function messageIdentities<N extends number>(count: N): Tuple<MessageIdentity, N> {
  return Array.from({ length: count }, (_, index) => {
    const provider = providers[index % providers.length]!;
    const messageId = randomBytes(12).toString('hex');
    const recipient = `${randomUUID()}@example.net`;
    return { key: messageKey(provider, messageId, recipient), provider, messageId, recipient };
  }).sort((a, b) => (a.key < b.key ? -1 : 1)) as Tuple<MessageIdentity, N>;
}

/** What one event says about a message. */
export function message(
  identity: MessageIdentity,
  facts: number,
  time: number,
  trackingId: string | null = null,
  stream: string | null = null,
): MessageRecord {
  return { ...identity, trackingId, stream, facts, firstEventAt: time, lastEventAt: time };
}

/** An event as the service prepares it, with a fresh key unless one is given. */
export function storedEvent(parts: { key?: string; message?: MessageRecord; suppression?: SuppressionRecord }): StoredEvent {
  const trackingId = parts.message?.trackingId ?? null;
  return {
    key: parts.key ?? `conformance:${randomUUID()}`,
    message: parts.message ?? null,
    trackingIdSearchKey: trackingId === null ? null : trackingIdSearchKey(trackingId),
    suppression: parts.suppression ?? null,
  };
}

/** One hour in milliseconds: the rule's examples count in hours of days-long windows. */
export const HOUR = 3_600_000;

/** The soft-bounce rule as the service passes it to a store (`storedSoftBounceRule`). */
export function softBounceRule(
  bounces: number,
  days: number,
  options: { resetOnDelivery?: boolean; expireAfterDays?: number | null } = {},
): StoredSoftBounceRule {
  const rules: SuppressionRules = {
    softBounces: { bounces, days, resetOnDelivery: options.resetOnDelivery === true },
    ...(options.expireAfterDays === undefined ? {} : { expireAfterDays: { softBounces: options.expireAfterDays } }),
  };
  return storedSoftBounceRule(rules)!;
}

/** The cause of the event of `key`, as the service makes it. */
export function causeOf(key: string, provider: Provider, messageId: string | null, diagnostic: string | null): SuppressionCause {
  return { provider, messageId, eventId: timelineEntryId(key), diagnostic };
}

/**
 * A soft bounce of `message` (a message ID: the same one is the same message) to `address` at `time`,
 * as the service prepares it when the project has the rule: no suppression of its own, a `ruleInput`.
 */
export function softBounce(
  address: Address,
  time: number,
  message: string,
  key = `conformance:${randomUUID()}`,
  diagnostic: string | null = '452 4.2.2 Mailbox full',
): StoredEvent {
  const cause = causeOf(key, 'postmark', message, diagnostic);
  return {
    ...storedEvent({ key }),
    ruleInput: {
      kind: 'soft_bounce',
      hash: address.hash,
      email: address.email,
      at: time,
      message: messageKey('postmark', message, address.email),
      cause,
      packed: packRuleBounce(cause, time),
      causeJson: JSON.stringify([cause.provider, cause.messageId, cause.diagnostic]),
    },
  };
}

/** A delivery to `address` at `time`, as the service prepares it when the rule resets on one. */
export function delivery(address: Address, time: number, key = `conformance:${randomUUID()}`): StoredEvent {
  return { ...storedEvent({ key }), ruleInput: { kind: 'delivery', hash: address.hash, at: time } };
}

/** An event whose own suppression the policy decided (`webhook`: a bounce or complaint; `unsubscribe`: the recipient asked). */
export function suppressingEvent(
  address: Address,
  reason: SuppressionReason,
  time: number,
  parts: { key?: string; source?: 'webhook' | 'unsubscribe'; stream?: string; expiresAt?: number } = {},
): StoredEvent {
  const key = parts.key ?? `conformance:${randomUUID()}`;
  const record: SuppressionRecord = {
    ...suppression(address, reason, time),
    provenance: { source: parts.source ?? 'webhook', at: time, event: causeOf(key, 'postmark', `m-${key}`, null) },
    ...(parts.stream === undefined ? {} : { stream: parts.stream }),
    ...(parts.expiresAt === undefined ? {} : { expiresAt: parts.expiresAt }),
  };
  return storedEvent({ key, suppression: record });
}
