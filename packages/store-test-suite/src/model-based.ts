import type { Store } from '@mailwarden/core';
import type { MessageRecord, SuppressionRecord } from '@mailwarden/core/store';
import fc from 'fast-check';
import * as arbitrary from './arbitraries.js';
import { randomProjectId, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { walkPages } from './pages.js';

/** The model and the store under test look alike: a Store and the project the run writes to. */
interface System {
  store: Store;
  projectId: string;
}

type Operation = (store: Store, projectId: string) => Promise<unknown>;

/** A list as a store's optional argument: none for the project-wide list, so a store is also called as before streams. */
const lists = (stream: string | undefined): [] | [string] => (stream === undefined ? [] : [stream]);

export function describeModelBasedTests(options: StoreConformanceOptions): void {
  const { describe, expect, test } = options;

  /** One call, run on the model and on the store: both must answer the same. */
  const command = (describeCall: () => string, operation: Operation): fc.AsyncCommand<System, System> => ({
    check: () => true,
    async run(model, real) {
      const expected = await operation(model.store, model.projectId);
      const actual = await operation(real.store, real.projectId);
      // No message needed: fast-check reports the failing sequence through each command's toString.
      expect(actual).toStrictEqual(expected);
    },
    toString: describeCall,
  });

  const applyEvents = arbitrary.eventBatch.map((events) =>
    command(
      () => `applyEvents(${fc.stringify(events)})`,
      (store, projectId) => store.applyEvents(projectId, events),
    ),
  );
  const commands = [
    arbitrary.suppression.map((record) =>
      command(
        () => `addSuppression(${fc.stringify(record)})`,
        (store, projectId) => store.addSuppression(projectId, record),
      ),
    ),
    fc.tuple(arbitrary.hash, arbitrary.suppressionList).map(([hash, stream]) =>
      command(
        () => `removeSuppression(${hash}, ${fc.stringify(stream)})`,
        (store, projectId) => store.removeSuppression(projectId, hash, ...lists(stream)),
      ),
    ),
    fc.array(arbitrary.suppression, { maxLength: 5 }).map((records) =>
      command(
        () => `mergeSuppressions(${fc.stringify(records)})`,
        (store, projectId) => store.mergeSuppressions(projectId, records),
      ),
    ),
    fc.tuple(fc.array(arbitrary.hash, { maxLength: 4 }), arbitrary.suppressionList).map(([hashes, stream]) =>
      command(
        () => `removeSuppressions(${fc.stringify(hashes)}, ${fc.stringify(stream)})`,
        (store, projectId) => store.removeSuppressions(projectId, hashes, ...lists(stream)),
      ),
    ),
    // The check rule, for one list or every list at once (a stream: the project-wide entry, else the stream's).
    fc.tuple(arbitrary.hash, arbitrary.suppressionList).map(([hash, stream]) =>
      command(
        () => `getSuppression(${hash}, ${fc.stringify(stream)})`,
        (store, projectId) => store.getSuppression(projectId, hash, ...lists(stream)),
      ),
    ),
    fc.tuple(fc.array(arbitrary.hash, { maxLength: 5 }), arbitrary.suppressionList).map(([hashes, stream]) =>
      command(
        () => `getSuppressions(${fc.stringify(hashes)}, ${fc.stringify(stream)})`,
        (store, projectId) => store.getSuppressions(projectId, hashes, ...lists(stream)),
      ),
    ),
    fc.constant(
      command(
        () => 'getSuppressions of the whole address pool, for every list',
        (store, projectId) =>
          Promise.all(
            arbitrary.everySuppressionList.map((stream) =>
              store.getSuppressions(
                projectId,
                arbitrary.addressPool.map((entry) => entry.hash),
                ...lists(stream),
              ),
            ),
          ),
      ),
    ),
    arbitrary.suppressionQuery.map(({ after: start, ...filters }) =>
      command(
        () => `listSuppressions walk (${fc.stringify({ ...filters, start })})`,
        (store, projectId) =>
          walkPages(
            filters.limit,
            (after) => store.listSuppressions(projectId, after === undefined ? filters : { ...filters, after }),
            (record: SuppressionRecord) => ({ createdAt: record.createdAt, hash: record.hash }),
            start,
          ),
      ),
    ),
    applyEvents,
    applyEvents, // twice as likely as the others: events build most of the state
    // Every tracking ID of the pool, so a message left behind in its old ID's listing shows.
    arbitrary.messageQuery.map(({ after: start, ...filters }) =>
      command(
        () => `listMessages walks, unfiltered and per tracking ID (${fc.stringify({ ...filters, start })})`,
        (store, projectId) =>
          Promise.all(
            [undefined, ...arbitrary.trackingIdPool].map(async (trackingId) => {
              const query = trackingId === undefined ? filters : { ...filters, trackingId };
              const pages = await walkPages(
                filters.limit,
                (after) => store.listMessages(projectId, after === undefined ? query : { ...query, after }),
                (record: MessageRecord) => ({ firstEventAt: record.firstEventAt, key: record.key }),
                start,
              );
              return { trackingId, pages };
            }),
          ),
      ),
    ),
    arbitrary.trackingIdQuery.map(({ after: start, ...filters }) =>
      command(
        () => `listTrackingIds walk (${fc.stringify({ ...filters, start })})`,
        (store, projectId) =>
          walkPages(
            filters.limit,
            (after) => store.listTrackingIds(projectId, after === undefined ? filters : { ...filters, after }),
            (row) => row.trackingId,
            start,
          ),
      ),
    ),
    // Every tracking ID of the pool and some never stored, so a row left behind or missing shows.
    fc.constant(
      command(
        () => 'getTrackingId of every ID of the pool, and of IDs never stored',
        (store, projectId) =>
          Promise.all(
            [...arbitrary.trackingIdPool, ...arbitrary.absentTrackingIds].map((trackingId) => store.getTrackingId(projectId, trackingId)),
          ),
      ),
    ),
    // Every message of the pool with its timeline, built up by whatever events came before.
    fc.constant(
      command(
        () => 'getMessage of every message of the pool',
        (store, projectId) => Promise.all(arbitrary.messagePool.map(({ identity }) => store.getMessage(projectId, identity.key))),
      ),
    ),
  ];

  describe('model', () => {
    test('random command sequences get the same answers from the store as from the model', async () => {
      const store = await options.createStore({});
      try {
        await fc.assert(
          // size 'max': by default fast-check keeps sequences to about ten commands, too few to build up state.
          fc.asyncProperty(fc.commands(commands, { maxCommands: 80, size: 'max' }), async (sequence) => {
            // A project per run: the store may hold earlier runs' and other suites' data.
            const projectId = randomProjectId();
            await fc.asyncModelRun(() => ({ model: { store: createStoreModel(), projectId }, real: { store, projectId } }), sequence);
          }),
          { numRuns: options.numRuns ?? 50 },
        );
      } finally {
        await store.close();
      }
    });
  });
}
