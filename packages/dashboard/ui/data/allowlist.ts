import type { Api } from '../api.js';
import { useLoad } from './load.js';

/** One page of the allowlist from `cursor`. A new `version` (bumped after an add or a removal) loads it again. */
export function useAllowlistPage(api: Api, limit: number, cursor: string | undefined, version: number) {
  return useLoad((signal) => api.allowlist.list({ limit, cursor }, signal), [api, limit, cursor, version]);
}
