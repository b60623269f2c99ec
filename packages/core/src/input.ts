import type { z } from 'zod';
import { MailwardenError } from './errors.js';

/** What a project id looks like; see `assertProjectId`. */
export const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Parses caller input with a wire schema, or throws `invalid_request` naming every problem. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  const first = details[0]!;
  throw new MailwardenError('invalid_request', `Invalid ${what}: ${first.path === '' ? '' : `${first.path}: `}${first.message}.`, {
    details,
  });
}

/**
 * Project ids appear in URLs, Redis keys and SQL rows: 1–64 characters of letters, digits, `.`, `_`
 * and `-`, starting with a letter or digit.
 */
export function assertProjectId(projectId: string): string {
  if (typeof projectId !== 'string' || !PROJECT_ID.test(projectId)) {
    throw new MailwardenError(
      'invalid_request',
      'Invalid project id: use 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.',
    );
  }
  return projectId;
}

/**
 * A listing's time range from its query (`from` inclusive, `to` exclusive), as epoch milliseconds. The
 * texts are already checked by the query schema; a range whose `to` is not after its `from` is refused,
 * since it can only be a mistake (it matches nothing).
 */
export function parseTimeRange(range: { from?: string | undefined; to?: string | undefined }): { from?: number; to?: number } {
  const from = range.from === undefined ? undefined : Date.parse(range.from);
  const to = range.to === undefined ? undefined : Date.parse(range.to);
  if (from !== undefined && to !== undefined && !(from < to)) {
    throw new MailwardenError('invalid_request', 'Invalid time range: to must be later than from (from is inclusive, to exclusive).', {
      details: [{ path: 'to', message: 'must be later than from' }],
    });
  }
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}
