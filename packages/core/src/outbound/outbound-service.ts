import type { EndpointStatus } from '../api-schemas.js';
import { MailwardenError } from '../errors.js';
import { assertProjectId } from '../input.js';
import type { OutboundState } from '../store/changes.js';
import type { Store } from '../store/store.js';
import { actorOf, type ActorOption } from '../services/actor-option.js';
import { formatTimestamp } from '../timestamp.js';
import type { OutboundEngine } from './engine.js';
import type { CheckedEndpoint } from './options.js';

/** A project's outbound webhook endpoints (docs/outbound-webhooks.md): where each stands, and resuming a paused one. */
export interface OutboundService {
  /**
   * The project's configured endpoints with their delivery state, in configuration order; none when it
   * has no endpoint.
   *
   * @example
   * const [crm] = await mailwarden.outbound.list('acme');
   * if (crm?.state === 'paused') console.log(`${crm.id} paused: ${crm.last_error}`);
   */
  list(projectId: string): Promise<EndpointStatus[]>;
  /**
   * Resumes a paused endpoint: it delivers again from its cursor, the change that failed first (nothing
   * is lost). A running endpoint is answered unchanged. Throws `endpoint_not_found` for an id the project
   * has not configured.
   *
   * @example
   * await mailwarden.outbound.resume('acme', 'crm');
   */
  resume(projectId: string, endpointId: string, options?: ActorOption): Promise<EndpointStatus>;
}

/** The outbound service over the checked endpoints; `engine` is woken after a resume so delivery starts at once. */
export function createOutboundService(
  store: Store,
  now: () => number,
  endpoints: readonly CheckedEndpoint[],
  engine?: OutboundEngine,
): OutboundService {
  const endpointsOf = (projectId: string) => endpoints.filter((endpoint) => endpoint.projectId === projectId);
  return {
    async list(projectId) {
      const configured = endpointsOf(assertProjectId(projectId));
      if (configured.length === 0) return [];
      const [states, latest] = await Promise.all([
        store.getOutbound(
          projectId,
          configured.map((endpoint) => endpoint.id),
        ),
        latestSeq(store, projectId),
      ]);
      return configured.map((endpoint, index) => toEndpointStatus(endpoint, states[index], latest));
    },
    async resume(projectId, endpointId, options) {
      const actor = actorOf(options);
      const endpoint = endpointsOf(assertProjectId(projectId)).find((candidate) => candidate.id === endpointId);
      if (endpoint === undefined)
        throw new MailwardenError(
          'endpoint_not_found',
          `Project ${projectId} has no outbound webhook endpoint ${JSON.stringify(String(endpointId))}.`,
        );
      const state = await store.resumeOutbound(projectId, endpoint.id, now(), actor);
      // Read after the resume, so `latest` counts the `endpoint.resumed` it appended.
      const latest = await latestSeq(store, projectId);
      engine?.wake(projectId, endpoint.id);
      return toEndpointStatus(endpoint, state, latest);
    },
  };
}

/** The project's latest `seq`: a page after any cursor answers it, and reading past the end never expires. */
async function latestSeq(store: Store, projectId: string): Promise<number> {
  return (await store.listChanges(projectId, { after: Number.MAX_SAFE_INTEGER, limit: 1 })).last;
}

/** An endpoint as the API shows it; one never leased yet starts at the feed's end, so it is shown there. */
export function toEndpointStatus(endpoint: CheckedEndpoint, state: OutboundState | undefined, latest: number): EndpointStatus {
  const time = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : formatTimestamp(ms));
  const cursor = state?.cursor ?? latest;
  const failures = state?.failures ?? 0;
  const pausedAt = state?.pausedAt ?? null;
  return {
    id: endpoint.id,
    url: shownUrl(endpoint.url),
    kinds: endpoint.kinds ?? null,
    state: pausedAt !== null ? 'paused' : failures > 0 ? 'retrying' : 'delivering',
    cursor,
    latest,
    lag: Math.max(0, latest - cursor),
    failures,
    failing_since: time(state?.failingSince),
    next_attempt_at: pausedAt === null && failures > 0 ? time(state?.nextAttemptAt) : null,
    paused_at: time(pausedAt),
    last_error: state?.lastError ?? null,
    last_success_at: time(state?.lastSuccessAt),
  };
}

/** The URL without its query or fragment, which often carry a receiver's token (docs/outbound-webhooks.md#the-api). */
function shownUrl(url: string): string {
  const parsed = new URL(url);
  const hidden = parsed.search !== '' || parsed.hash !== '';
  return `${parsed.origin}${parsed.pathname}${hidden ? '?…' : ''}`;
}
