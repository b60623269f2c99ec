import { messageStatuses, normalizeEmail, providers, suppressionReasons, type SuppressionReason } from '@mailwarden/core';
import {
  Fact,
  createEmailHasher,
  messageKey,
  timelineEntryId,
  trackingIdSearchKey,
  type MessagePosition,
  type MessageQuery,
  type MessageRecord,
  type StoredEvent,
  type SuppressionPosition,
  type SuppressionQuery,
  type SuppressionProvenance,
  type SuppressionRecord,
  type TrackingIdQuery,
} from '@mailwarden/core/store';
import fc from 'fast-check';
import { at } from './records.js';

// Small pools, so random commands keep meeting the same addresses, messages, event keys and times.

const hashEmail = createEmailHasher();

export const addressPool = [
  'ana@example.com',
  'bo@example.org',
  'chen@example.net',
  'dara@example.com',
  'eli@example.io',
  'fé@exämple.com',
  'gus@example.com',
]
  .map(normalizeEmail)
  .map((email) => ({ email, hash: hashEmail(email) }));

/** A few seconds apart, so equal times (the tie-breaks) are common. */
export const time = fc.integer({ min: 0, max: 4 }).map(at);

const address = fc.constantFrom(...addressPool);

/** Mostly hashes of the pool; sometimes one that is never stored. */
export const hash = fc.oneof(
  { weight: 4, arbitrary: address.map((entry) => entry.hash) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('hex')) },
);

/**
 * The streams of suppression lists: few, so random commands keep meeting the same lists. Names of
 * every shape a stream may have (a one-letter one, digits and `-`).
 */
export const suppressionStreamPool = ['marketing', 'weekly-digest', 'a', 'x-1'];

/** A suppression list: the project-wide one (`undefined`) half the time, else a stream's. */
export const suppressionList: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom(...suppressionStreamPool) },
);

/** Every list a project of the suite may have: the project-wide one first. */
export const everySuppressionList: readonly (string | undefined)[] = [undefined, ...suppressionStreamPool];

/**
 * An added suppression of the project-wide list: by the API, an import or an unsubscribe recorded as
 * such, or (one time in four) without provenance, as records stored before it read.
 */
export const projectWideSuppression: fc.Arbitrary<SuppressionRecord> = fc
  .record({
    address,
    reason: fc.constantFrom(...suppressionReasons),
    createdAt: time,
    source: fc.constantFrom('api' as const, 'import' as const, 'unsubscribe' as const, undefined),
  })
  .map(({ address, reason, createdAt, source }) => ({
    hash: address.hash,
    email: address.email,
    reason,
    createdAt,
    ...(source === undefined ? {} : { provenance: { source, at: createdAt } }),
  }));

/** An added suppression in any list (`suppressionList`). */
export const suppression: fc.Arbitrary<SuppressionRecord> = fc
  .tuple(projectWideSuppression, suppressionList)
  .map(([record, stream]) => (stream === undefined ? record : { ...record, stream }));

/** What a cause's diagnostic may say: nothing, an SMTP reply, a feedback type, text with the packing's separators. */
export const diagnosticPool = [null, '550 5.1.1 <ana@example.com>: no such user', 'abuse', 'a,b:"c"\\ fé ✓ 😀'];
const diagnostic = fc.constantFrom(...diagnosticPool);

export const suppressionPosition: fc.Arbitrary<SuppressionPosition> = fc.record({ createdAt: time, hash });

/** Case variants, astral characters next to U+FFFD, characters that lower-case to longer text, pattern characters. */
export const trackingIdPool = [
  'promo',
  'Promo',
  'PROMO-2',
  'a',
  'a\uFFFD',
  'a😀',
  '\uFFFD',
  '😀',
  'İstanbul',
  '50%_off',
  '[x]*?',
  '😀'.repeat(128),
];

export const trackingId = fc.constantFrom(...trackingIdPool);

/**
 * Stream names: valid ones that order differently in code points than in case-folded or length order,
 * so a store joining two streams of one message (a sender error) by any other rule than the smaller
 * shows. A message has its sender's stream, none, or now and then another.
 */
export const streamPool = ['marketing', 'market', 'weekly-digest', 'weekly_digest', '0day', 'a'.repeat(64)];
export const stream = fc.constantFrom(...streamPool);

/** A `search` as the service passes it: lower-cased, well-formed, sometimes a pattern character. */
export const search = fc.oneof(
  fc.constantFrom('%', '_', '\\', '*', '?', '[', '.', 'zz'),
  fc.tuple(trackingId, fc.nat(), fc.nat()).map(([id, from, size]) => {
    const codePoints = Array.from(trackingIdSearchKey(id));
    const start = from % codePoints.length;
    return codePoints.slice(start, start + 1 + (size % (codePoints.length - start))).join('');
  }),
);

/** Tracking IDs no message of the pool carries: other case, inside or around the pool's IDs, U+0000. */
export const absentTrackingIds = ['PROMO', 'prom', 'promo-2', 'A', 'a\u0000', 'a😀z', '😀'.repeat(127), 'istanbul'];

/** An `after` for tracking IDs: one of the pool, or a string between or beyond them. */
export const trackingIdAfter = fc.oneof(trackingId, fc.constantFrom('Q', 'a\u0000', 'a😀z', '\uE000', '\u{10FFFF}'));

const providerOf = (index: number) => providers[index % providers.length]!;

/**
 * Messages fixed by index, so one key always names the same provider, id and recipient. Each has the
 * tracking ID its sender meant, so every ID of the pool gets messages (a disagreeing ID wins whenever it
 * is smaller, so a uniformly random ID per event would leave only the smallest IDs alive).
 */
export const messagePool = Array.from({ length: 2 * trackingIdPool.length }, (_, index) => {
  const messageId = `0100019a-${index}`;
  const recipient = addressPool[index % addressPool.length]!.email;
  return {
    identity: { key: messageKey(providerOf(index), messageId, recipient), provider: providerOf(index), messageId, recipient },
    trackingId: trackingIdPool[index % trackingIdPool.length]!,
    // Every third message has no stream, so listings mix messages with and without one.
    stream: index % 3 === 2 ? null : streamPool[index % streamPool.length]!,
  };
});

export const facts = fc
  .subarray(Object.values(Fact), { minLength: 1, maxLength: 3 })
  .map((names) => names.reduce((bits, bit) => bits | bit, 0));

export const messageKeyOrRandom = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...messagePool.map((entry) => entry.identity.key)) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 16, maxLength: 16 }).map((bytes) => Buffer.from(bytes).toString('hex')) },
);

export const messagePosition: fc.Arbitrary<MessagePosition> = fc.record({ firstEventAt: time, key: messageKeyOrRandom });

const message: fc.Arbitrary<MessageRecord> = fc
  .record({
    message: fc.constantFrom(...messagePool),
    // undefined: the ID its sender meant; null: an event without one; else a sender error, from the pool.
    trackingId: fc.oneof(
      { weight: 5, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: fc.constant(null) },
      { weight: 2, arbitrary: trackingId },
    ),
    // As for the tracking ID: the sender's stream mostly, an event without one, or a sender error.
    stream: fc.oneof(
      { weight: 5, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: stream },
    ),
    facts,
    time,
  })
  .map(({ message, trackingId, stream, facts, time }) => ({
    ...message.identity,
    trackingId: trackingId === undefined ? message.trackingId : trackingId,
    stream: stream === undefined ? message.stream : stream,
    facts,
    firstEventAt: time,
    lastEventAt: time,
  }));

/**
 * What an event's suppression is: a bounce or a complaint (any reason, the project-wide list), or, one
 * time in four, an unsubscribe (`manual`, source `unsubscribe`) in the list `unsubscribe` names.
 */
const eventSuppression = (lists: fc.Arbitrary<string | undefined>) =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({ address, reason: fc.constantFrom(...suppressionReasons), time, diagnostic, unsubscribe: fc.constant(null) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        address,
        reason: fc.constant('manual' as const),
        time,
        diagnostic: fc.constant(null),
        unsubscribe: lists.map((stream) => ({ stream })),
      }),
    },
  );

/**
 * An event as the service prepares it. Keys come from a small pool, so duplicates happen within and
 * across batches; a duplicate's content may differ from the first (the key alone decides). `lists`:
 * the lists an unsubscribe goes to (any, by default).
 */
export const storedEventIn = (lists: fc.Arbitrary<string | undefined>, keyPrefix = 'ses:event-'): fc.Arbitrary<StoredEvent> =>
  fc
    .record({
      key: fc.integer({ min: 0, max: 39 }).map((index) => `${keyPrefix}${index}`),
      message: fc.option(message, { nil: null, freq: 5 }),
      suppression: fc.option(eventSuppression(lists), { freq: 2 }),
    })
    .map(({ key, message, suppression }) => ({
      key,
      message,
      // As the service does: an entry for every event that names a message, its id from the key.
      ...(message === null
        ? {}
        : {
            timelineEntry: {
              id: timelineEntryId(key),
              eventKey: key,
              type: 'delivered' as const,
              provider: message.provider,
              occurredAt: message.firstEventAt,
            },
          }),
      trackingIdSearchKey: message?.trackingId == null ? null : trackingIdSearchKey(message.trackingId),
      // As the service does: the suppressed address is the message's recipient, at the event's time.
      suppression:
        suppression === null
          ? null
          : message === null
            ? {
                hash: suppression.address.hash,
                email: suppression.address.email,
                reason: suppression.reason,
                createdAt: suppression.time,
                provenance: causeOf(key, null, suppression.time, suppression.diagnostic, suppression.unsubscribe !== null),
                ...streamOf(suppression.unsubscribe),
              }
            : {
                hash: hashEmail(message.recipient),
                email: message.recipient,
                reason: suppression.reason,
                createdAt: message.firstEventAt,
                provenance: causeOf(key, message, message.firstEventAt, suppression.diagnostic, suppression.unsubscribe !== null),
                ...streamOf(suppression.unsubscribe),
              },
    }));

export const storedEvent: fc.Arbitrary<StoredEvent> = storedEventIn(suppressionList);

/** An event whose suppression, if any, is in the project-wide list (an unsubscribe without a stream included). */
export const projectWideEvent: fc.Arbitrary<StoredEvent> = storedEventIn(fc.constant(undefined));

const streamOf = (unsubscribe: { stream: string | undefined } | null) =>
  unsubscribe?.stream === undefined ? {} : { stream: unsubscribe.stream };

/** As the service does: a webhook suppression's provenance names its event; so does a provider unsubscribe's. */
function causeOf(
  key: string,
  message: MessageRecord | null,
  at: number,
  diagnostic: string | null,
  unsubscribe = false,
): SuppressionProvenance {
  return {
    source: unsubscribe ? 'unsubscribe' : 'webhook',
    at,
    event: { provider: message?.provider ?? 'ses', messageId: message?.messageId ?? null, eventId: timelineEntryId(key), diagnostic },
  };
}

export const eventBatch = fc.array(storedEvent, { maxLength: 6 });

export const limit = fc.integer({ min: 1, max: 4 });

/** Builds a query object without the keys whose value is undefined, as the service does. */
function query<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T;
}

/** Undefined two times in three: filters that are each often absent, so combined ones still match messages. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

/** A bound of a time range: the pool's times and one past them, so `from` and `to` land on, between and beyond events. */
export const timeBound = sometimes(fc.integer({ min: 0, max: 5 }).map(at));

/** A message recipient to filter by: the pool's (every message has one of them), or an address no message has. */
export const recipientFilter = fc.constantFrom(...addressPool.map((entry) => entry.email), 'nobody@example.com');

/** The pool's addresses cut after each of their code points (empty and whole included): every prefix that matches. */
export const addressPrefixPool = ['', ...new Set(addressPool.flatMap(({ email }) => prefixesOf(email)))];

function prefixesOf(text: string): string[] {
  const codePoints = Array.from(text);
  return codePoints.map((_, end) => codePoints.slice(0, end + 1).join(''));
}

/**
 * A prefix as the service passes it: mostly one of the pool's (so it matches), sometimes its upper-case
 * form (which the service would have lower-cased: a store compares exactly, so it matches nothing), or
 * text no address starts with: LIKE's and Lua's pattern characters (a store that passed them on
 * unescaped would match `an_` to `ana@…`, `%` to everything), a dot past the end, a domain in Unicode.
 */
export const addressPrefix = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...addressPrefixPool) },
  { weight: 1, arbitrary: fc.constantFrom(...addressPrefixPool).map((prefix) => prefix.toUpperCase()) },
  { weight: 1, arbitrary: fc.constantFrom('%', '_', 'an_', 'a%', '\\', 'an\\', '.', '.*', '[a]', 'ana@example.com.', 'fé@exämple', 'zz') },
);

/** The pool's domains (as stored), their case and subdomain neighbours, and `''` (which no normalized recipient has). */
export const recipientDomain = fc.constantFrom(
  ...new Set(addressPool.map(({ email }) => email.slice(email.indexOf('@') + 1))),
  'EXAMPLE.COM',
  'example',
  'xample.com',
  'mail.example.com',
  'exämple.com',
  '%',
  '',
);

/** A message query without its tracking ID: the model-based test walks it for every ID of the pool. */
export const messageQuery: fc.Arbitrary<Omit<MessageQuery, 'trackingId'>> = fc
  .record({
    limit,
    status: fc.option(fc.constantFrom(...messageStatuses), { nil: undefined }),
    recipient: sometimes(recipientFilter),
    recipientPrefix: sometimes(addressPrefix),
    recipientDomain: sometimes(recipientDomain),
    provider: sometimes(fc.constantFrom(...providers)),
    stream: sometimes(fc.oneof(stream, fc.constant('marketin'))),
    from: timeBound,
    to: timeBound,
    after: fc.option(messagePosition, { nil: undefined, freq: 2 }),
  })
  .map(query);

export const trackingIdQuery: fc.Arbitrary<TrackingIdQuery> = fc
  .record({
    limit,
    search: fc.option(search, { nil: undefined }),
    after: fc.option(trackingIdAfter, { nil: undefined, freq: 2 }),
  })
  .map(query);

/**
 * A message listing's filters, each absent two times in three, tracking ID and status too: so that
 * combined filters still match some messages of a few batches, and a walk is rarely empty.
 */
export const messageFilters: fc.Arbitrary<Omit<MessageQuery, 'after'>> = fc
  .record({
    limit,
    trackingId: sometimes(trackingId),
    status: sometimes(fc.constantFrom(...messageStatuses)),
    recipient: sometimes(recipientFilter),
    recipientPrefix: sometimes(addressPrefix),
    recipientDomain: sometimes(recipientDomain),
    provider: sometimes(fc.constantFrom(...providers)),
    stream: sometimes(fc.oneof(stream, fc.constant('marketin'))),
    from: timeBound,
    to: timeBound,
  })
  .map(query);

export const suppressionQuery: fc.Arbitrary<SuppressionQuery> = fc
  .record({
    stream: suppressionList,
    limit,
    reason: sometimes(fc.constantFrom(...suppressionReasons)),
    emailPrefix: sometimes(addressPrefix),
    from: timeBound,
    to: timeBound,
    after: fc.option(suppressionPosition, { nil: undefined, freq: 2 }),
  })
  .map(query);

/** Splits `items` into consecutive batches at the given cut points (any arrival batching of the same events). */
export function batches<T>(items: readonly T[], cuts: readonly number[]): T[][] {
  const points = [...new Set(cuts.map((cut) => cut % (items.length + 1)))].sort((a, b) => a - b);
  const result: T[][] = [];
  let from = 0;
  for (const point of [...points, items.length]) {
    if (point > from) result.push(items.slice(from, point));
    from = Math.max(from, point);
  }
  return result;
}

// The soft-bounce rule, expiry and the allowlist (docs/decisions.md, "The soft-bounce rule"): few
// addresses (two of one domain, for domain entries), few messages, hours within a few windows.

/** Three addresses of the pool: the first two share `example.com`, so a domain entry covers both. */
export const ruleAddressPool = [addressPool[0]!, addressPool[3]!, addressPool[1]!];

/** The rule's fixed clock in its property tests: 120 hours (5 days) after `T0`; event times lie before it. */
export const RULE_HOURS = 120;

/** Mostly the first address, so its bounces meet; the others for the allowlist's domain and for isolation. */
const ruleAddress = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: ruleAddressPool.length - 1 }) },
);
/** Mostly within the last two days before the clock, so windows fill; sometimes older than any rule keeps. */
const hour = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: RULE_HOURS - 48, max: RULE_HOURS }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: RULE_HOURS }) },
);

/** The rule as configured: 1 to 4 bounces in half a day, one or two days, reset or not, expiring or not. */
export const ruleConfig = fc.record({
  bounces: fc.integer({ min: 1, max: 4 }),
  days: fc.constantFrom(0.5, 1, 2),
  resetOnDelivery: fc.boolean(),
  /** Of the rule's suppressions: `undefined` the default (30 days), `null` never, else days (1 expires some before the clock). */
  expireAfterDays: fc.constantFrom(undefined, null, 1, 3),
});
export type RuleConfig = typeof ruleConfig extends fc.Arbitrary<infer T> ? T : never;

/** One thing that happens to an address, by the index of `ruleAddressPool`; times in hours after `T0`. */
export type RuleStep =
  | { kind: 'soft_bounce'; address: number; hour: number; message: number; diagnostic: string | null }
  | { kind: 'delivery'; address: number; hour: number }
  | { kind: 'webhook'; address: number; hour: number; reason: 'hard_bounce' | 'complaint'; expiresAfterHours: number | null }
  | { kind: 'unsubscribe'; address: number; hour: number; stream: string | undefined }
  | { kind: 'merge'; address: number; hour: number; reason: SuppressionReason; source: 'api' | 'import'; expiresAfterHours: number | null }
  | { kind: 'add'; address: number; hour: number; reason: SuppressionReason; expiresAfterHours: number | null }
  | { kind: 'remove'; address: number }
  | { kind: 'allow'; entry: number }
  | { kind: 'disallow'; entry: number };

/** Sometimes expiring: after a few hours (often before the clock) or a few days. */
const expiresAfterHours = fc.constantFrom(null, null, 2, 48, 200);

/** Steps the law covers: events and bulk merges, which commute (design §3, "Why"). `messages`: how many messages an address has. */
export const commutingRuleStep = (messages: number): fc.Arbitrary<RuleStep> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant('soft_bounce' as const),
        address: ruleAddress,
        hour,
        message: fc.integer({ min: 0, max: messages - 1 }),
        diagnostic: fc.constantFrom(...diagnosticPool),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('webhook' as const),
        address: ruleAddress,
        hour,
        reason: fc.constantFrom('hard_bounce' as const, 'complaint' as const),
        expiresAfterHours,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('unsubscribe' as const),
        address: ruleAddress,
        hour,
        stream: fc.constantFrom(undefined, 'marketing'),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('merge' as const),
        address: ruleAddress,
        hour,
        reason: fc.constantFrom(...suppressionReasons),
        source: fc.constantFrom('api' as const, 'import' as const),
        expiresAfterHours,
      }),
    },
  );

/** Any step: also deliveries, adds (insert-if-absent), removals and allowlist changes, which do not commute. */
export const ruleStep: fc.Arbitrary<RuleStep> = fc.oneof(
  { weight: 10, arbitrary: commutingRuleStep(4) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delivery' as const), address: ruleAddress, hour }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      address: ruleAddress,
      hour,
      reason: fc.constantFrom(...suppressionReasons),
      expiresAfterHours,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), address: ruleAddress }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('allow' as const), entry: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('disallow' as const), entry: fc.integer({ min: 0, max: 3 }) }) },
);
