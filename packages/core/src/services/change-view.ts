import { formatTimestamp } from '../timestamp.js';
import { MailwardenError } from '../errors.js';
import type { ChangeView } from '../api-schemas.js';
import { changeKinds, type AuditedKey, type Change, type ChangeKind } from '../store/changes.js';
import { toAllowlistItem } from './allowlist-service.js';
import { toMessage } from './message-service.js';
import { toSuppression } from './suppression-service.js';
import { listedNames } from './listed-names.js';

/**
 * A change as the API answers it and outbound webhooks send it: the suppression, message and allowlist
 * entry exactly as their listings show them, nothing more (no timeline details: docs/core.md, "Change feed").
 * The one place the view is made, so `changes.list`, `GET …/changes` and a webhook's body agree.
 */
export function toChangeView(projectId: string, change: Change): ChangeView {
  const head = { id: `${projectId}:${change.seq}`, seq: change.seq, project: projectId };
  // `actor` follows `at` only when the writer named one: a change without keeps its bytes.
  const at = formatTimestamp(change.at);
  const by = change.actor === undefined ? {} : { actor: change.actor };
  switch (change.kind) {
    case 'suppression.added':
    case 'suppression.upgraded':
    case 'suppression.updated':
    case 'suppression.removed':
    case 'suppression.expired':
      return {
        ...head,
        kind: change.kind,
        at,
        ...by,
        suppression: toSuppression(change.record),
        ...(change.previous === undefined ? {} : { previous: toSuppression(change.previous) }),
      };
    case 'message.status_changed':
      return {
        ...head,
        kind: change.kind,
        at,
        ...by,
        message: toMessage(change.message),
        from: change.from,
        to: change.to,
        event: { id: change.event.id, type: change.event.type, occurred_at: formatTimestamp(change.event.occurredAt) },
      };
    case 'alert.bounce_rate':
    case 'alert.complaint_rate':
      return {
        ...head,
        kind: change.kind,
        at,
        ...by,
        alert: {
          tracking_id: change.trackingId,
          firing: change.firing,
          messages: change.messages,
          count: change.count,
          rate: rateOf(change.count, change.messages),
          threshold: change.thresholdPpm / 1e6,
        },
      };
    case 'allowlist.added':
    case 'allowlist.removed':
      return { ...head, kind: change.kind, at, ...by, entry: toAllowlistItem(change.entry) };
    case 'stream.paused':
    case 'stream.resumed':
      return { ...head, kind: change.kind, at, ...by, stream: change.stream, cause: change.cause };
    case 'endpoint.paused':
    case 'endpoint.resumed':
      return {
        ...head,
        kind: change.kind,
        at,
        ...by,
        endpoint: change.endpoint,
        ...(change.error === undefined ? {} : { error: change.error }),
      };
    case 'address.erased':
      return {
        ...head,
        kind: change.kind,
        at,
        ...by,
        hash: change.hash,
        records: change.records.map(toSuppression),
        messages: change.messages,
        changes: change.changes,
      };
    case 'key.added':
    case 'key.updated':
    case 'key.removed':
      return {
        ...head,
        kind: change.kind,
        at,
        ...by,
        key: auditedKey(change.key),
        ...(change.previous === undefined ? {} : { previous: auditedKey(change.previous) }),
      };
  }
}

/** Only the name and scopes: a store's `SyncedKey` also has a `version`, never shown. */
const auditedKey = (key: AuditedKey): AuditedKey => ({ name: key.name, scopes: [...key.scopes] });

/** `count` of `messages` as a fraction; 0 for an empty window. */
export const rateOf = (count: number, messages: number): number => (messages === 0 ? 0 : count / messages);

/** The families a reader may name instead of kinds: each stands for the kinds that start with it and a dot. */
export const changeFamilies = ['suppression', 'message', 'alert', 'allowlist', 'stream', 'endpoint', 'address', 'key'] as const;
export type ChangeFamily = (typeof changeFamilies)[number];
/** What a reader may name to filter the feed: a kind, or a family of kinds. */
export type ChangeKindFilter = ChangeKind | ChangeFamily;

/**
 * The kinds a reader asks for, as given: kinds and families (`suppression` for every `suppression.*`),
 * in an array or comma-separated (`suppression,alert.bounce_rate`), blanks ignored. Returns them in feed
 * vocabulary order without repeats, or `undefined` when none is named (every kind). Throws
 * `invalid_request` naming the first unknown one.
 *
 * @example
 * parseChangeKinds('suppression,message'); // ['suppression.added', …, 'suppression.expired', 'message.status_changed']
 */
export function parseChangeKinds(input: string | readonly string[] | undefined): ChangeKind[] | undefined {
  if (input === undefined) return undefined;
  const wanted = new Set<ChangeKind>();
  for (const name of listedNames(input, 'Invalid kind: expected kinds or families as text.')) {
    const matching = changeKinds.filter((kind) => kind === name || kind.startsWith(`${name}.`));
    if (matching.length === 0) {
      throw new MailwardenError(
        'invalid_request',
        `Invalid kind: ${JSON.stringify(name)} is neither a change kind nor a family (${changeFamilies.join(', ')}).`,
        {
          details: [{ path: 'kind', message: `unknown kind ${JSON.stringify(name)}` }],
        },
      );
    }
    for (const kind of matching) wanted.add(kind);
  }
  return wanted.size === 0 ? undefined : changeKinds.filter((kind) => wanted.has(kind));
}
