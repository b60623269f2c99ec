import type { Api, DayRange } from '../api.js';
import { useLoad } from './load.js';

/** Counts per UTC day over `range`: of one tracking ID, or of the whole project for `null`. */
export function useDailyStats(api: Api, trackingId: string | null, range: DayRange) {
  return useLoad((signal) => api.stats(trackingId, range, signal), [api, trackingId, range.from, range.to]);
}
