import type { CursorCodec } from '../cursor.js';
import type { EmailHasher } from '../email/hash.js';
import type { HookDispatcher } from './hooks.js';
import type { Store } from '../store/store.js';
import type { SuppressionPolicy } from '../suppressions/policy.js';
import type { SuppressionRules } from '../suppressions/rules.js';

/** What every part of a mailwarden instance shares. */
export interface MailwardenContext {
  store: Store;
  hashEmail: EmailHasher;
  cursors: CursorCodec;
  policy: SuppressionPolicy;
  /** Epoch milliseconds. */
  now: () => number;
  /** Whether timelines keep personal details (`url`, `userAgent`); `MailwardenOptions.timeline`. */
  timelinePersonalData?: boolean;
  /**
   * A project's default stream (`MailwardenOptions.defaultStream`, already checked): where an unsubscribe
   * event without a stream is recorded; `undefined` for project-wide.
   */
  defaultStream?: (projectId: string) => string | undefined;
  /**
   * A project's suppression rules (`MailwardenOptions.rules`, already checked): the soft-bounce rule and
   * expiry by kind; absent, or `undefined` for a project, when it has none.
   */
  rules?: (projectId: string) => SuppressionRules | undefined;
  /** The app's hooks (`MailwardenOptions.on`); absent when it gave none, so nothing is built for them. */
  hooks?: HookDispatcher;
}
