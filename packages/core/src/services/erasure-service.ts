import type { MailwardenContext } from './context.js';
import type { Erasure } from '../api-schemas.js';
import { normalizeEmail, trimWhiteSpace } from '../email/normalize.js';
import { assertProjectId } from '../input.js';
import { erasedEmail } from '../store/actor.js';
import type { SuppressionRecord } from '../store/store.js';
import { actorOf, type ActorOption } from './actor-option.js';
import { toSuppression } from './suppression-service.js';

/**
 * Erasure on request (GDPR art. 17) that keeps blocking (docs/core.md, "Erasure"; docs/decisions.md,
 * "Erasure"): every stored trace of an address goes, while a suppression of it stays, by hash only.
 */
export interface ErasureService {
  /**
   * Erases `email` from the project: its messages with their timelines, its allowlist entry, its dedup
   * keys, the feed's changes about it and the email text of its suppressions go; the project-wide list
   * keeps (or gets) a suppression of its hash, never expiring, whose `email` is the placeholder
   * `<hash16>@erased.invalid`, so checks of the address still answer suppressed. Idempotent: again, it
   * erases nothing more (and records another `address.erased`). Throws `invalid_email`. No hook is called.
   *
   * @example
   * const { hash, records } = await mailwarden.erasures.erase('acme', 'Jane.Doe@Example.com', { actor: 'key:privacy-desk' });
   */
  erase(projectId: string, email: string, options?: ActorOption): Promise<Erasure>;
}

/**
 * Every text of an address a store may hold in a dedup key or elsewhere (`AddressErasure.forms`): as
 * given, trimmed, normalized, lower-cased, and each as JSON escapes it inside a string; unique, non-empty.
 */
export function erasureForms(given: string, normalized: string): string[] {
  const trimmed = trimWhiteSpace(given);
  const plain = [given, trimmed, normalized, given.toLowerCase(), trimmed.toLowerCase()];
  const forms = new Set<string>();
  for (const form of [...plain, ...plain.map((text) => JSON.stringify(text).slice(1, -1))]) if (form !== '') forms.add(form);
  return [...forms];
}

export function createErasureService(context: MailwardenContext): ErasureService {
  const { store, hashEmail } = context;
  return {
    async erase(projectId, email, options) {
      assertProjectId(projectId);
      const actor = actorOf(options);
      const normalized = normalizeEmail(email);
      const hash = hashEmail(normalized);
      const now = Math.trunc(context.now());
      // What blocks the address when the project-wide list holds nothing live: written by hand, never expiring.
      const suppression: SuppressionRecord = {
        hash,
        email: erasedEmail(hash),
        reason: 'manual',
        createdAt: now,
        provenance: { source: 'api', at: now },
      };
      // The store drops the hash from check caches (the in-process one at once: `createCheckCache`).
      const result = await store.eraseAddress(projectId, {
        hash,
        email: normalized,
        forms: erasureForms(email, normalized),
        suppression,
        now,
        ...(actor === undefined ? {} : { actor }),
      });
      return {
        hash,
        email: erasedEmail(hash),
        suppressed: true,
        records: result.records.map(toSuppression),
        messages: result.messages,
        changes: result.changes,
      };
    },
  };
}
