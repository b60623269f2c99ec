import type { Api, InList } from '../api.js';
import { useLoad } from './load.js';

/**
 * One page of a list (`stream`'s, else the project-wide one): the suppressions whose address starts
 * with `emailPrefix` (all of them without one), only those that expire or never do when `expiring` is
 * given, from `cursor`. A new `version` (bumped after an add or a removal) loads it again.
 */
export function useSuppressionPage(
  api: Api,
  { stream, emailPrefix, expiring }: InList & { emailPrefix: string | undefined; expiring: boolean | undefined },
  limit: number,
  cursor: string | undefined,
  version: number,
) {
  return useLoad(
    (signal) => api.suppressions.list({ stream, emailPrefix, expiring, limit, cursor }, signal),
    [api, stream, emailPrefix, expiring, limit, cursor, version],
  );
}

/** Whether `email` is suppressed now: for every mail without `stream`, for that stream's mail with one. */
export function useSuppressionCheck(api: Api, email: string, stream: string | undefined) {
  return useLoad((signal) => api.suppressions.check({ email, stream }, signal), [api, email, stream]);
}
