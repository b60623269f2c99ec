import { useState } from 'preact/hooks';
import type { AllowlistItem } from '@mailwarden/core';
import { useCan } from '../access.js';
import { ApiError, type Api } from '../api.js';
import { ListingFailure, Pager, usePages } from '../components/pager.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { useAllowlistPage } from '../data/allowlist.js';
import { useSubmission } from '../data/submission.js';
import { formatTime } from '../format.js';

const PAGE_SIZE = 50;

const kindLabels: Record<AllowlistItem['kind'], string> = { address: 'Address', domain: 'Domain' };

/**
 * The project's allowlist (docs/dashboard.md, "Allowlist"): addresses and `@domain`s that events never
 * suppress, in code-point order as the API lists them. Add one, remove one; the page is in its address
 * (`allowlist?page=…&cursor=…`).
 */
export function AllowlistPage({ api, url }: { api: Api; url: URL }) {
  // Bumped after a change, so the list shows it at once.
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState('');
  const changed = (message: string) => {
    setNotice(message);
    setVersion((value) => value + 1);
  };
  const canWrite = useCan('write');
  return (
    <>
      <h1>Allowlist</h1>
      <p class="lead">
        Bounces and complaints never suppress an address on the allowlist, nor any address of a domain on it: their events are still
        recorded. Seed and test inboxes, or your own domain, belong here. An address can still be added to a suppression list by hand.
      </p>
      {canWrite ? (
        <div class="tools">
          <AddForm api={api} onAdded={changed} />
        </div>
      ) : null}
      <p class="notice" role="status">
        {notice}
      </p>
      <AllowlistEntries api={api} url={url} version={version} onRemoved={changed} />
    </>
  );
}

function AddForm({ api, onAdded }: { api: Api; onAdded(message: string): void }) {
  const [entry, setEntry] = useState('');
  const [outcome, submit] = useSubmission<boolean>();
  return (
    <form
      class="tool"
      aria-labelledby="allow-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit(async () => {
          const added = await api.allowlist.add(entry);
          onAdded(added.created ? `Added ${added.entry.entry} to the allowlist.` : `${added.entry.entry} was already on the allowlist.`);
          return true;
        }).then((done) => done === true && setEntry(''));
      }}
    >
      <h2 id="allow-title">Add to the allowlist</h2>
      <div class="field">
        <label for="allow-entry">Address or @domain</label>
        <input
          id="allow-entry"
          type="text"
          required
          value={entry}
          spellcheck={false}
          autoComplete="off"
          aria-describedby="allow-entry-hint"
          onInput={(event) => setEntry(event.currentTarget.value)}
        />
        <span class="note" id="allow-entry-hint">
          An address (seed@example.com), or @ and a domain (@example.com) for every address of it
        </span>
      </div>
      <button type="submit" disabled={outcome.state === 'busy'}>
        Add
      </button>
      {outcome.state === 'failed' ? <Failure error={outcome.error} doing="add to the allowlist" /> : null}
    </form>
  );
}

function AllowlistEntries({ api, url, version, onRemoved }: { api: Api; url: URL; version: number; onRemoved(message: string): void }) {
  const pages = usePages(url, PAGE_SIZE);
  const listing = useAllowlistPage(api, PAGE_SIZE, pages.cursor, version);
  const [removal, remove] = useSubmission<string>();
  const canWrite = useCan('write');
  if (listing.state === 'loading') return <Loading>Loading the allowlist…</Loading>;
  if (listing.state === 'failed')
    return <ListingFailure error={listing.error} pages={pages} reload={listing.reload} doing="load the allowlist" />;
  const { items, next_cursor } = listing.data;
  if (items.length === 0 && pages.number === 1) return <Empty>The allowlist is empty: events may suppress any address.</Empty>;
  return (
    <>
      {removal.state === 'failed' ? <Failure error={removal.error} doing="remove from the allowlist" /> : null}
      <div class="table-scroll">
        <table class="allowlist">
          <caption>Allowlisted addresses and domains, in alphabetical order</caption>
          <thead>
            <tr>
              <th scope="col">Entry</th>
              <th scope="col">Kind</th>
              <th scope="col">Added</th>
              {canWrite ? (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.entry}>
                <th scope="row" class="literal">
                  <bdi>{item.entry}</bdi>
                </th>
                <td data-label="Kind">{kindLabels[item.kind]}</td>
                <td data-label="Added">
                  <time dateTime={item.created_at}>{formatTime(item.created_at)}</time>
                </td>
                {canWrite ? (
                  <td class="actions">
                    <button
                      type="button"
                      class="quiet"
                      disabled={removal.state === 'busy'}
                      onClick={() =>
                        void remove(async () => {
                          onRemoved(
                            (await removed(api, item.entry))
                              ? `Removed ${item.entry} from the allowlist: events may suppress it again.`
                              : `${item.entry} was no longer on the allowlist; nothing changed.`,
                          );
                          return item.entry;
                        })
                      }
                    >
                      Remove<span class="visually-hidden"> {item.entry}</span>
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager pages={pages} nextCursor={next_cursor} shown={items.length} label="Pages of the allowlist" />
    </>
  );
}

/** Removes `entry`; `false` when it was already gone (removed meanwhile, in another tab or by the CLI). */
async function removed(api: Api, entry: string): Promise<boolean> {
  try {
    await api.allowlist.remove(entry);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'allowlist_entry_not_found') return false;
    throw error;
  }
}
