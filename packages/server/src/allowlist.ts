import { isMailwardenError, type AllowlistItem, type AllowlistPage, type AllowlistService } from '@mailwarden/core';
import { remoteCaller, type RemoteOptions } from './suppressions-file/remote.js';

/**
 * What the allowlist commands use: `mailwarden.allowlist` of a store opened here, or a running service
 * reached over HTTP (`remoteAllowlist`).
 */
export type AllowlistTarget = Pick<AllowlistService, 'list' | 'add' | 'remove'>;

export type AllowlistAction = 'list' | 'add' | 'remove';

/**
 * The allowlist endpoints of a running service as an `AllowlistTarget`. An error answer is thrown as
 * the `MailwardenError` the service sent (`invalid_email`, `allowlist_entry_not_found`, …).
 *
 * @example
 * const { allowlist } = remoteAllowlist({ url: 'http://127.0.0.1:3000', apiKey: process.env.MAILWARDEN_API_KEY! });
 * await allowlist.add('acme', '@our-company.example');
 */
export function remoteAllowlist(options: RemoteOptions): { allowlist: AllowlistTarget } {
  const send = remoteCaller(options);
  const path = (projectId: string) => `/projects/${encodeURIComponent(projectId)}/allowlist`;
  return {
    allowlist: {
      list: async (projectId, query = {}) => {
        const search = new URLSearchParams();
        for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
        return (await send<AllowlistPage>('GET', `${path(projectId)}${search.size > 0 ? `?${search}` : ''}`)).answer;
      },
      add: async (projectId, entry) => {
        const { status, answer } = await send<AllowlistItem>('POST', path(projectId), { entry });
        // 201: added; 200: it was there.
        return { entry: answer, created: status === 201 };
      },
      remove: async (projectId, entry) => {
        await send('DELETE', `${path(projectId)}/${encodeURIComponent(entry)}`);
        return { deleted: true, entry };
      },
    },
  };
}

const PAGE_SIZE = 100;

/**
 * `mailwarden allowlist list|add|remove`: `list` writes every entry of the project, one a line (entry,
 * kind, created_at, separated by tabs); `add` and `remove` take entries (addresses or `@domain`) and say
 * what each did. An entry that is invalid, or not there to remove, is reported and the others done;
 * then the exit status is 1. Other errors (the store or the service unavailable) stop the command.
 */
export async function runAllowlistCommand(
  target: AllowlistTarget,
  command: { action: AllowlistAction; projectId: string; entries: readonly string[] },
  output: { write(line: string): void; error(line: string): void },
): Promise<number> {
  const { action, projectId, entries } = command;
  if (action === 'list') {
    let cursor: string | null = null;
    let count = 0;
    do {
      const page: AllowlistPage = await target.list(projectId, cursor === null ? { limit: PAGE_SIZE } : { limit: PAGE_SIZE, cursor });
      for (const { entry, kind, created_at } of page.items) output.write(`${entry}\t${kind}\t${created_at}`);
      count += page.items.length;
      cursor = page.next_cursor;
    } while (cursor !== null);
    output.error(`${count} ${count === 1 ? 'entry' : 'entries'} on the allowlist of ${projectId}.`);
    return 0;
  }
  let failed = false;
  for (const text of entries) {
    try {
      if (action === 'add') {
        const { entry, created } = await target.add(projectId, text);
        output.write(created ? `Added ${entry.entry} (${entry.kind}).` : `${entry.entry} was already on the allowlist.`);
      } else {
        const { entry } = await target.remove(projectId, text);
        output.write(`Removed ${entry}.`);
      }
    } catch (error) {
      if (!isMailwardenError(error) || (error.code !== 'invalid_email' && error.code !== 'allowlist_entry_not_found')) throw error;
      output.error(error.code === 'invalid_email' ? `${text}: ${error.message}` : `${text} is not on the allowlist of ${projectId}.`);
      failed = true;
    }
  }
  return failed ? 1 : 0;
}
