import type { Api } from '../api.js';
import { useLoad } from './load.js';

/**
 * One page of the suppressions whose address starts with `emailPrefix` (all of them without one), from
 * `cursor`. A new `version` (bumped after an add or a removal) loads it again.
 */
export function useSuppressionPage(api: Api, emailPrefix: string | undefined, limit: number, cursor: string | undefined, version: number) {
  return useLoad((signal) => api.suppressions.list({ emailPrefix, limit, cursor }, signal), [api, emailPrefix, limit, cursor, version]);
}

/** Whether `email` is suppressed now. */
export function useSuppressionCheck(api: Api, email: string) {
  return useLoad((signal) => api.suppressions.check(email, signal), [api, email]);
}
