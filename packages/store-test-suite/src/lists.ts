import type { Store } from '@mailwarden/core';
import type { SuppressionRecord } from '@mailwarden/core/store';
import { everySuppressionList } from './arbitraries.js';

/**
 * Every list of a project as a store holds it (docs/storage.md, "Suppression lists"): the project-wide one, then
 * each stream of the suite's pool, each newest first. For comparing whole states, since a check
 * (`getSuppression` with a stream) answers the project-wide entry before the stream's.
 */
export function everyList(store: Store, projectId: string): Promise<SuppressionRecord[][]> {
  return Promise.all(
    everySuppressionList.map((stream) =>
      store.listSuppressions(projectId, stream === undefined ? { limit: 1000 } : { limit: 1000, stream }),
    ),
  );
}

/** A key naming an address in one list. */
export const listKey = (record: Pick<SuppressionRecord, 'hash' | 'stream'>): string => `${record.stream ?? ''}\n${record.hash}`;
