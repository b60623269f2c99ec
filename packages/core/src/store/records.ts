// The records a store keeps that the change feed carries too: apart from store.ts, so the feed's
// types (changes.ts) and the Store interface both use them without importing each other.
import type { SuppressionReason } from '../vocabulary.js';
import type { SuppressionProvenance } from '../suppressions/provenance.js';

export interface SuppressionRecord {
  /** 64 lower-case hex characters: the hash of `email` (see `createEmailHasher`). */
  hash: string;
  /** The normalized address. */
  email: string;
  reason: SuppressionReason;
  /** Epoch milliseconds of the first time the address was suppressed. */
  createdAt: number;
  /**
   * How it came to be: of the strongest reason, the earliest cause (`provenanceWins`). Absent on records
   * stored before provenance existed (read as unknown).
   */
  provenance?: SuppressionProvenance;
  /**
   * The stream whose list holds it (a stream name, `isStreamName`); absent for the project-wide list.
   * Each list of a project (the project-wide one and one per stream) is independent: the same hash may
   * be in several, each with its own reason, time and provenance. An entry in a stream blocks mail of
   * that stream only; a project-wide entry blocks every stream (docs/decisions.md, "Streams").
   */
  stream?: string;
  /**
   * Epoch milliseconds at which it stops suppressing; absent when it never does (every record stored
   * before expiry existed). A record whose `expiresAt` is at or before the caller's `now` is expired:
   * reads and writes given that `now` treat it as absent (a write replaces it, as if the list had none),
   * and `purgeExpired` deletes it later. In a join the winner's `expiresAt` goes with its provenance
   * (docs/decisions.md, "Suppressions that expire").
   */
  expiresAt?: number;
}

/** What a store may need about a project's allowlist (`Store.addAllowlistEntry`). */
export interface AllowlistEntry {
  /**
   * What events are matched by: the address's hash (64 hex) for an address, `@` and the domain for a
   * domain (a recipient's domain is the text after the last `@` of its normalized address; exact, no
   * subdomains).
   */
  key: string;
  /** The normalized address, or `@` and the normalized domain: what listings show and sort by. */
  entry: string;
  /** Epoch milliseconds it was added. */
  createdAt: number;
}
