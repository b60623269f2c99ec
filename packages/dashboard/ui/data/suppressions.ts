import type { Api, InList } from '../api.js';
import { useLoad } from './load.js';

/**
 * One page of a list (`stream`'s, else the project-wide one): the suppressions whose address starts
 * with `emailPrefix` (all of them without one), from `cursor`. A new `version` (bumped after an add or
 * a removal) loads it again.
 */
export function useSuppressionPage(
  api: Api,
  { stream, emailPrefix }: InList & { emailPrefix: string | undefined },
  limit: number,
  cursor: string | undefined,
  version: number,
) {
  return useLoad(
    (signal) => api.suppressions.list({ stream, emailPrefix, limit, cursor }, signal),
    [api, stream, emailPrefix, limit, cursor, version],
  );
}

/** Whether `email` is suppressed now: for every mail without `stream`, for that stream's mail with one. */
export function useSuppressionCheck(api: Api, email: string, stream: string | undefined) {
  return useLoad((signal) => api.suppressions.check({ email, stream }, signal), [api, email, stream]);
}
