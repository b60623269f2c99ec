import type { CursorCodec } from '../cursor.js';
import type { EmailHasher } from '../email/hash.js';
import type { HookDispatcher } from './hooks.js';
import type { Store } from '../store/store.js';
import type { SuppressionPolicy } from '../suppressions/policy.js';
import type { SuppressionRules } from '../suppressions/rules.js';
import type { StoredAlertRule } from '../store/changes.js';

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
  /**
   * A project's alert rules as stores apply them (`MailwardenOptions.alerts`, checked and converted);
   * absent, or `undefined` for a project, when it has none, so no alert window is read or written.
   */
  alerts?: (projectId: string) => StoredAlertRule | undefined;
  /** The app's hooks (`MailwardenOptions.on`); absent when it gave none, so nothing is built for them. */
  hooks?: HookDispatcher;
}
