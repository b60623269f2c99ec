import type { Api } from '../api.js';
import { useLoad } from './load.js';

/** The project's alert status; a new `version` (bumped after a resume) loads it again. */
export function useAlertStatus(api: Api, version: number) {
  return useLoad((signal) => api.alerts(signal), [api, version]);
}

/** The project's paused streams; a new `version` loads them again. */
export function usePausedStreams(api: Api, version: number) {
  return useLoad((signal) => api.streams.listPaused(signal), [api, version]);
}

/** The configured outbound endpoints and where each stands; a new `version` loads them again. */
export function useOutboundEndpoints(api: Api, version: number) {
  return useLoad((signal) => api.outbound.list(signal), [api, version]);
}
