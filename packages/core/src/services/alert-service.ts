import type { MailwardenContext } from './context.js';
import { MailwardenError } from '../errors.js';
import { assertProjectId } from '../input.js';
import { assertTrackingId } from '../tracking-id.js';
import type { AlertRateView, AlertStatus } from '../api-schemas.js';
import type { AlertWindow, StoredAlertRule } from '../store/changes.js';
import { rateOf } from './change-view.js';
import { toPausedStreamView } from './stream-service.js';

export interface AlertStatusQuery {
  /** This tracking ID's window (the project's alerts must keep one per tracking ID: `AlertRules.trackingIds`). Absent: the project's. */
  trackingId?: string;
}

/** Deliverability alerts (docs/core.md, "Alerts"): where a window's rates stand against their thresholds. */
export interface AlertService {
  /**
   * The project's window (or a tracking ID's) now: its messages, bounce and complaint counts and rates
   * (fractions) against their thresholds, whether each alert is firing, and the paused streams. Throws
   * `alerts_not_configured` when the project has no alert rules (or keeps no window per tracking ID
   * and one is asked for).
   *
   * @example
   * const { bounce } = await mailwarden.alerts.status('acme');
   * if (bounce.firing) console.log(`bounce rate ${(bounce.rate * 100).toFixed(2)} %`);
   */
  status(projectId: string, query?: AlertStatusQuery): Promise<AlertStatus>;
}

export function createAlertService(context: MailwardenContext): AlertService {
  const { store } = context;
  return {
    async status(projectId, query = {}) {
      assertProjectId(projectId);
      const rule = context.alerts?.(projectId);
      if (rule === undefined)
        throw new MailwardenError('alerts_not_configured', 'This project has no alert rules.', { details: { project: projectId } });
      const trackingId = query.trackingId === undefined || query.trackingId === '' ? null : assertTrackingId(query.trackingId);
      if (trackingId !== null && !rule.trackingIds)
        throw new MailwardenError('alerts_not_configured', "This project's alerts keep no window per tracking ID (trackingIds).", {
          details: { project: projectId, tracking_id: trackingId },
        });
      const [[window], paused] = await Promise.all([store.getAlertWindows(projectId, [trackingId]), store.listPausedStreams(projectId)]);
      return alertStatusOf(rule, trackingId, window, paused.map(toPausedStreamView));
    },
  };
}

/** The status of one window (a window never moved: empty, nothing firing). */
function alertStatusOf(
  rule: StoredAlertRule,
  trackingId: string | null,
  window: AlertWindow | undefined,
  pausedStreams: AlertStatus['paused_streams'],
): AlertStatus {
  const messages = window?.messages ?? 0;
  const rate = (count: number, thresholds: StoredAlertRule['bounce'], firing: boolean): AlertRateView => ({
    count,
    rate: rateOf(count, messages),
    threshold: thresholds.firePpm / 1e6,
    resolve_below: thresholds.resolvePpm / 1e6,
    firing,
  });
  return {
    window: rule.window,
    min_messages: rule.minMessages,
    tracking_id: trackingId,
    messages,
    bounce: rate(window?.bounced ?? 0, rule.bounce, window?.bounceFiring ?? false),
    complaint: rate(window?.complained ?? 0, rule.complaint, window?.complaintFiring ?? false),
    paused_streams: pausedStreams,
  };
}
