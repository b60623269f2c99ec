import { isEmailHash } from '../../email/hash.js';
import { messageStatus } from '../../messages/facts.js';
import { mergeMessage, trackingIdDeltas, type MessageRecord, type TrackingIdDelta } from '../../messages/message.js';
import { compareCodePoints, trackingIdSearchKey } from '../../tracking-id.js';
import type {
  EventOutcome,
  MessageQuery,
  StoredEvent,
  Store,
  SuppressionPosition,
  SuppressionRecord,
  TrackingIdQuery,
  TrackingIdRecord,
} from '../store.js';
import { SortedList } from './sorted-list.js';
import { SuppressionTable } from './suppression-table.js';

type MessageOrderKey = Pick<MessageRecord, 'firstEventAt' | 'key'>;

/** Newest first, then by key. */
function compareMessages(a: MessageOrderKey, b: MessageOrderKey): number {
  if (a.firstEventAt !== b.firstEventAt) return b.firstEventAt - a.firstEventAt;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

interface TrackingIdRow {
  record: TrackingIdRecord;
  searchKey: string;
  messages: SortedList<MessageRecord, MessageOrderKey>;
}

class ProjectState {
  readonly suppressions = new SuppressionTable();
  readonly seenEventKeys = new Set<string>();
  readonly messages = new Map<string, MessageRecord>();
  readonly messageOrder = new SortedList<MessageRecord, MessageOrderKey>(compareMessages);
  readonly trackingIds = new Map<string, TrackingIdRow>();
  readonly trackingIdOrder = new SortedList<string>(compareCodePoints);

  apply(event: StoredEvent): EventOutcome {
    // Checked before anything changes, so an event is applied wholly or not at all.
    if (event.suppression !== null && !isEmailHash(event.suppression.hash)) {
      throw new TypeError(`not a suppression hash: ${JSON.stringify(event.suppression.hash)}`);
    }
    if (this.seenEventKeys.has(event.key)) return 'duplicate';
    this.seenEventKeys.add(event.key);
    if (event.message !== null) this.mergeMessage(event.message, event.trackingIdSearchKey);
    if (event.suppression !== null) this.suppressions.upsert(event.suppression);
    return 'applied';
  }

  private mergeMessage(seen: MessageRecord, searchKey: string | null): void {
    const before = this.messages.get(seen.key);
    // A copy: the store must not share objects its caller may change later.
    const after = mergeMessage(before, { ...seen });
    this.messages.set(after.key, after);
    if (before === undefined) this.messageOrder.insert(after);
    else this.messageOrder.replace(before, after);

    if (before?.trackingId != null && before.trackingId !== after.trackingId) {
      this.trackingIds.get(before.trackingId)?.messages.remove(before);
    }
    for (const delta of trackingIdDeltas(before, after)) {
      const row = this.trackingIdRow(delta.trackingId, searchKey);
      if (delta.trackingId === after.trackingId) {
        if (before?.trackingId === after.trackingId) row.messages.replace(before, after);
        else row.messages.insert(after);
      }
      this.applyDelta(row, delta);
    }
  }

  private trackingIdRow(trackingId: string, searchKey: string | null): TrackingIdRow {
    let row = this.trackingIds.get(trackingId);
    if (row === undefined) {
      row = {
        record: { trackingId, messages: 0, delivered: 0, bounced: 0, complained: 0, lastEventAt: -Infinity },
        searchKey: searchKey ?? trackingIdSearchKey(trackingId),
        messages: new SortedList<MessageRecord, MessageOrderKey>(compareMessages),
      };
      this.trackingIds.set(trackingId, row);
      this.trackingIdOrder.insert(trackingId);
    }
    return row;
  }

  private applyDelta(row: TrackingIdRow, delta: TrackingIdDelta): void {
    const record = row.record;
    record.messages += delta.messages;
    record.delivered += delta.delivered;
    record.bounced += delta.bounced;
    record.complained += delta.complained;
    if (record.messages === 0) {
      this.trackingIds.delete(record.trackingId);
      this.trackingIdOrder.remove(record.trackingId);
    } else if (delta.lastEventAt === 'recompute') {
      record.lastEventAt = -Infinity;
      for (const message of row.messages.after(undefined)) {
        record.lastEventAt = Math.max(record.lastEventAt, message.lastEventAt);
      }
    } else {
      record.lastEventAt = Math.max(record.lastEventAt, delta.lastEventAt.raise);
    }
  }
}

/** Claims between two sweeps of expired webhook tokens. */
const TOKEN_SWEEP_EVERY = 10_000;

/**
 * The embedded default: every project's state in this process's memory, lost when it exits. Each
 * operation runs synchronously inside one call, so it is atomic with respect to every other call.
 *
 * @example
 * const mailwarden = createMailwarden({ store: createMemoryStore() });
 */
export function createMemoryStore(): Store {
  const projects = new Map<string, ProjectState>();
  const project = (projectId: string): ProjectState => {
    let state = projects.get(projectId);
    if (state === undefined) {
      state = new ProjectState();
      projects.set(projectId, state);
    }
    return state;
  };
  // Reads of a project that was never written do not create it.
  const existing = (projectId: string): ProjectState | undefined => projects.get(projectId);
  // One-time webhook tokens by project and token. Expired ones are swept now and then; the sweep is the
  // only place this store reads a clock, and only to forget.
  const tokens = new Map<string, { digest: string; expiresAt: number }>();
  let claimsUntilSweep = TOKEN_SWEEP_EVERY;

  return {
    async getSuppression(projectId, hash) {
      return existing(projectId)?.suppressions.get(hash);
    },

    async getSuppressions(projectId, hashes) {
      const table = existing(projectId)?.suppressions;
      return hashes.map((hash) => table?.get(hash));
    },

    async addSuppression(projectId, record) {
      return project(projectId).suppressions.add({ ...record });
    },

    async removeSuppression(projectId, hash) {
      return existing(projectId)?.suppressions.remove(hash) ?? false;
    },

    async listSuppressions(projectId, page: { limit: number; after?: SuppressionPosition }): Promise<SuppressionRecord[]> {
      return existing(projectId)?.suppressions.list(page.limit, page.after) ?? [];
    },

    async applyEvents(projectId, events) {
      const state = project(projectId);
      return events.map((event) => state.apply(event));
    },

    async listMessages(projectId, query: MessageQuery) {
      const state = existing(projectId);
      if (state === undefined) return [];
      let order: SortedList<MessageRecord, MessageOrderKey> | undefined = state.messageOrder;
      if (query.trackingId !== undefined) order = state.trackingIds.get(query.trackingId)?.messages;
      if (order === undefined) return [];
      const page: MessageRecord[] = [];
      for (const message of order.after(query.after)) {
        if (query.status !== undefined && messageStatus(message.facts) !== query.status) continue;
        page.push({ ...message });
        if (page.length === query.limit) break;
      }
      return page;
    },

    async listTrackingIds(projectId, query: TrackingIdQuery) {
      const state = existing(projectId);
      if (state === undefined) return [];
      const page: TrackingIdRecord[] = [];
      for (const trackingId of state.trackingIdOrder.after(query.after)) {
        const row = state.trackingIds.get(trackingId)!;
        if (query.search !== undefined && !row.searchKey.includes(query.search)) continue;
        page.push({ ...row.record });
        if (page.length === query.limit) break;
      }
      return page;
    },

    async getTrackingId(projectId, trackingId) {
      const row = existing(projectId)?.trackingIds.get(trackingId);
      return row === undefined ? undefined : { ...row.record };
    },

    async claimWebhookToken(projectId, token, digest, expiresAt) {
      if (--claimsUntilSweep === 0) {
        claimsUntilSweep = TOKEN_SWEEP_EVERY;
        const now = Date.now();
        for (const [key, claim] of tokens) if (claim.expiresAt < now) tokens.delete(key);
      }
      const key = `${projectId}\n${token}`;
      const known = tokens.get(key);
      if (known === undefined) {
        tokens.set(key, { digest, expiresAt });
        return 'first';
      }
      return known.digest === digest ? 'same' : 'conflict';
    },

    async close() {
      projects.clear();
      tokens.clear();
    },
  } satisfies Store;
}
