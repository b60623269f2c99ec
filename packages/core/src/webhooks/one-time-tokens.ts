import { LRUCache } from 'lru-cache';
import type { WebhookTokenClaim } from '../store/store.js';

/** Claims a one-time webhook token for a body digest; see `Store.claimWebhookToken`. */
export type ClaimWebhookToken = (projectId: string, token: string, digest: string, expiresAt: number) => Promise<WebhookTokenClaim>;

/** Tokens remembered by the per-process fallback (about 20 MB at most). */
const PROCESS_TOKENS = 100_000;

/**
 * The fallback for stores without `claimWebhookToken`: the same answers, remembered by this process only
 * (bounded, least recently used first), so a replay sent to another instance is not caught.
 */
export function createProcessTokenClaims(now: () => number): ClaimWebhookToken {
  // Made on first use: lru-cache allocates its `max` slots up front (~15 ms for 100 000).
  let claims: LRUCache<string, string> | undefined;
  return async (projectId, token, digest, expiresAt) => {
    claims ??= new LRUCache<string, string>({ max: PROCESS_TOKENS });
    const key = `${projectId}\n${token}`;
    const known = claims.get(key);
    if (known === undefined) {
      claims.set(key, digest, { ttl: Math.max(1, expiresAt - now()) });
      return 'first';
    }
    return known === digest ? 'same' : 'conflict';
  };
}
