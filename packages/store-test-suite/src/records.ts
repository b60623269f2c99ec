import { randomBytes, randomUUID } from 'node:crypto';
import { providers, type SuppressionReason } from '@mailwarden/core';
import {
  createEmailHasher,
  messageKey,
  trackingIdSearchKey,
  type MessageRecord,
  type StoredEvent,
  type SuppressionRecord,
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
