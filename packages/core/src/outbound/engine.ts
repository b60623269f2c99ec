import { isMailwardenError } from '../errors.js';
import type { MailwardenMetrics } from '../metrics.js';
import type { MailwardenLogger } from '../services/hooks.js';
import { toChangeView } from '../services/change-view.js';
import type { Change, ChangePage, OutboundProgress, OutboundState } from '../store/changes.js';
import type { Store } from '../store/store.js';
import { deliver } from './delivery.js';
import type { CheckedEndpoint, CheckedOutbound } from './options.js';

/** Changes read from the feed at once; each is still POSTed alone, in order. */
const PAGE_SIZE = 100;

export interface OutboundEngine {
  /** Looks at an endpoint at once (after a resume) rather than at its next poll. */
  wake(projectId: string, endpointId: string): void;
  /** Stops every timer, waits for the deliveries in progress (each bounded by the timeout), and gives up the leases held. */
  close(): Promise<void>;
}

interface EngineDependencies {
  store: Store;
  now: () => number;
  logger: MailwardenLogger;
  metrics?: MailwardenMetrics;
}

/**
 * Delivers each configured endpoint's changes on timers, never on a caller's path
 * (docs/outbound-webhooks.md): one loop per endpoint per instance, which delivers only while it holds
 * the endpoint's lease in the store, so instances sharing a store never send one endpoint two changes at
 * once, and a killed holder's endpoint is taken over once its lease ends.
 */
export function startOutboundEngine(outbound: CheckedOutbound, dependencies: EngineDependencies): OutboundEngine {
  const loops = new Map(
    outbound.endpoints.map((endpoint) => [loopKey(endpoint.projectId, endpoint.id), endpointLoop(endpoint, outbound, dependencies)]),
  );
  return {
    wake: (projectId, endpointId) => loops.get(loopKey(projectId, endpointId))?.wake(),
    close: async () => {
      await Promise.all([...loops.values()].map((loop) => loop.close()));
    },
  };
}

const loopKey = (projectId: string, endpointId: string) => `${projectId}\n${endpointId}`;

interface EndpointLoop {
  wake(): void;
  close(): Promise<void>;
}

function endpointLoop(
  endpoint: CheckedEndpoint,
  outbound: CheckedOutbound,
  { store, now, logger, metrics }: EngineDependencies,
): EndpointLoop {
  const { projectId, id } = endpoint;
  const { owner, leaseMs, timeoutMs, timers, schedule } = outbound;
  let closed = false;
  let timer: unknown;
  let running: Promise<void> | undefined;
  /** Whether the last store error was logged: a store that stays down is logged once, not every poll. */
  let storeFailing = false;
  /** The lease's end as this loop last set it; 0 when it holds none. */
  let leaseUntil = 0;

  const plan = (ms: number) => {
    if (closed) return;
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = timers.setTimeout(run, ms);
  };
  const run = () => {
    timer = undefined;
    if (running !== undefined) return;
    running = tick()
      .then(() => {
        storeFailing = false;
      })
      .catch((error: unknown) => {
        if (!storeFailing) logger.error({ projectId, endpoint: id, error }, 'Outbound webhooks: the store failed; retrying at each poll');
        storeFailing = true;
      })
      .finally(() => {
        running = undefined;
        plan(outbound.pollMs);
      });
  };

  /** One look at the endpoint: lease it, then deliver what is due, in order, until caught up or a failure. */
  async function tick(): Promise<void> {
    let time = now();
    const leased = await store.leaseOutbound(projectId, id, owner, time, time + leaseMs);
    if (leased === undefined) {
      leaseUntil = 0;
      if (metrics !== undefined) await reportLag((await store.getOutbound(projectId, [id]))[0], time);
      return;
    }
    leaseUntil = time + leaseMs;
    let state: OutboundState = leased;
    if (state.pausedAt !== null || state.nextAttemptAt > time) {
      if (metrics !== undefined) await reportLag(state, time);
      return;
    }
    while (!closed) {
      let page: ChangePage;
      try {
        page = await store.listChanges(projectId, {
          after: state.cursor,
          limit: PAGE_SIZE,
          ...(endpoint.kinds && { kinds: endpoint.kinds }),
        });
      } catch (error) {
        if (!isCursorExpired(error)) throw error;
        const progress = await skipExpired(state);
        if (progress === undefined) return;
        state = { endpoint: id, ...progress };
        continue;
      }
      for (const change of page.changes) {
        if (closed) return;
        time = now();
        // A request starts only with more than its timeout left on the lease (docs/outbound-webhooks.md#ordering).
        if (leaseUntil - time <= timeoutMs) {
          const renewed = await store.leaseOutbound(projectId, id, owner, time, time + leaseMs);
          if (renewed === undefined || renewed.cursor !== state.cursor) return;
          leaseUntil = time + leaseMs;
        }
        const failure = await deliver(request(change, time), outbound);
        time = now();
        metrics?.outboundDelivery(id, failure === null ? 'delivered' : 'failed');
        const progress = failure === null ? delivered(change.seq, time) : failed(state, failure, time);
        if (!(await save(progress, time))) return;
        state = { endpoint: id, ...progress };
        if (failure !== null) {
          if (progress.pausedAt !== null)
            logger.error(
              { projectId, endpoint: id, cursor: state.cursor, failures: progress.failures, lastError: failure },
              `Outbound webhooks: endpoint ${id} of ${projectId} paused after failing since ${new Date(progress.failingSince ?? time).toISOString()}; resume it once it answers`,
            );
          if (metrics !== undefined) await reportLag(state, time, change);
          return;
        }
      }
      // The filter skipped changes past the last one delivered: move the cursor over them.
      if (page.next > state.cursor) {
        const progress = { ...progressOf(state), cursor: page.next };
        if (!(await save(progress, now()))) return;
        state = { endpoint: id, ...progress };
      }
      if (state.cursor >= page.last || (page.changes.length === 0 && page.next <= state.cursor)) {
        if (metrics !== undefined) await reportLag(state, now());
        return;
      }
    }
  }

  /** Retention overtook the cursor: moves it past the gap, logged (docs/outbound-webhooks.md#what-can-be-lost). */
  async function skipExpired(state: OutboundState): Promise<OutboundProgress | undefined> {
    const kept = await oldestReadableCursor(state.cursor);
    logger.error(
      { projectId, endpoint: id, cursor: state.cursor, skippedTo: kept },
      `Outbound webhooks: retention deleted changes ${state.cursor + 1} to ${kept} before endpoint ${id} of ${projectId} received them; it goes on after ${kept}`,
    );
    const progress = { ...progressOf(state), cursor: kept, lastError: 'cursor_expired' };
    return (await save(progress, now())) ? progress : undefined;
  }

  /** The lowest cursor the feed still answers (its `trimmed`): reading after a cursor fails below it and succeeds from it on. */
  async function oldestReadableCursor(expired: number): Promise<number> {
    const { last } = await store.listChanges(projectId, { after: Number.MAX_SAFE_INTEGER, limit: 1 });
    let low = expired + 1;
    let high = Math.max(last, low);
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      try {
        await store.listChanges(projectId, { after: middle, limit: 1 });
        high = middle;
      } catch (error) {
        if (!isCursorExpired(error)) throw error;
        low = middle + 1;
      }
    }
    return low;
  }

  async function currentState(): Promise<OutboundState | undefined> {
    return (await store.getOutbound(projectId, [id]))[0];
  }

  /** Writes progress while holding the lease, and renews it; `false` when another owner took it. */
  async function save(progress: OutboundProgress, time: number): Promise<boolean> {
    const until = time + leaseMs;
    const saved = await store.saveOutbound(projectId, id, owner, progress, until);
    leaseUntil = saved ? until : 0;
    return saved;
  }

  function request(change: Change, time: number) {
    const data = toChangeView(projectId, change);
    return {
      url: endpoint.url,
      id: data.id,
      body: JSON.stringify({ type: change.kind, timestamp: data.at, data }),
      signers: endpoint.signers,
      now: time,
    };
  }

  /** The progress after a failure: the next delay of the schedule, or paused once the last one failed too. */
  function failed(state: OutboundState, lastError: string, time: number): OutboundProgress {
    const failures = state.failures + 1;
    const delay = schedule[failures - 1];
    return {
      ...progressOf(state),
      failures,
      failingSince: state.failingSince ?? time,
      lastError,
      nextAttemptAt: delay === undefined ? 0 : time + delay,
      pausedAt: delay === undefined ? time : null,
    };
  }

  /** Reports how far behind the endpoint is: changes after its cursor, and the age of the oldest undelivered one. */
  async function reportLag(state: OutboundState | undefined, time: number, oldest?: Change): Promise<void> {
    if (metrics === undefined || state === undefined) return;
    let first = oldest;
    let last: number;
    try {
      const page = await store.listChanges(projectId, { after: state.cursor, limit: 1 });
      first ??= page.changes[0];
      last = page.last;
    } catch (error) {
      if (isCursorExpired(error)) return;
      throw error;
    }
    metrics.outboundLag(projectId, id, Math.max(0, last - state.cursor), first === undefined ? 0 : Math.max(0, time - first.at) / 1000);
  }

  plan(0);
  return {
    wake: () => {
      if (running === undefined) plan(0);
    },
    close: async () => {
      closed = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      await running;
      // Give the lease up so another instance takes over at once rather than after `leaseMs`.
      if (leaseUntil > 0) {
        const state = await currentState().catch(() => undefined);
        if (state !== undefined) await store.saveOutbound(projectId, id, owner, progressOf(state), 0).catch(() => false);
      }
    },
  };
}

const isCursorExpired = (error: unknown) => isMailwardenError(error) && error.code === 'change_cursor_expired';

function delivered(cursor: number, time: number): OutboundProgress {
  return { cursor, failures: 0, failingSince: null, nextAttemptAt: 0, pausedAt: null, lastError: null, lastSuccessAt: time };
}

function progressOf({ endpoint: _, ...progress }: OutboundState): OutboundProgress {
  return progress;
}
