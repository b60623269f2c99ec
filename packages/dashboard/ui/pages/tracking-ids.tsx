import type { TrackingIdSummary } from '@mailwarden/core';
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ListingFailure, Pager, usePages } from '../components/pager.js';
import { Empty, Loading } from '../components/states.js';
import { useTrackingIdPage } from '../data/tracking-ids.js';
import { formatCount, formatRate, formatTime } from '../format.js';
import { followLink, navigate, pageHref } from '../location.js';

const PAGE_SIZE = 50;
/** How long typing pauses before the page's search runs (and the URL follows). */
const SEARCH_PAUSE_MS = 200;

/** Every tracking ID with its counts and rates, searchable and paged; each opens Messages filtered to it. */
export function TrackingIdsPage({ api, url }: { api: Api; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  const [text, setText] = useState(search);
  useEffect(() => setText(search), [search]);
  useEffect(() => {
    if (text === search) return undefined;
    const timer = setTimeout(() => navigate(pageHref('tracking-ids', { search: text }), { replace: true }), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [text, search]);

  return (
    <>
      <h1>Tracking IDs</h1>
      {/* biome-ignore lint/a11y/useSemanticElements: <search> is too new for every supported browser's accessibility tree */}
      <form class="filters" role="search" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="tracking-id-search">Search tracking IDs</label>
          <input
            id="tracking-id-search"
            type="search"
            value={text}
            spellcheck={false}
            autoComplete="off"
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </div>
      </form>
      <TrackingIdList api={api} url={url} search={search} />
    </>
  );
}

function TrackingIdList({ api, url, search }: { api: Api; url: URL; search: string }) {
  const pages = usePages(url, PAGE_SIZE);
  const listing = useTrackingIdPage(api, search, PAGE_SIZE, pages.cursor);
  if (listing.state === 'loading') return <Loading>Loading tracking IDs…</Loading>;
  if (listing.state === 'failed')
    return <ListingFailure error={listing.error} pages={pages} reload={listing.reload} doing="load the tracking IDs" />;
  const { items, next_cursor } = listing.data;
  if (items.length === 0 && pages.number === 1) {
    return (
      <Empty>
        {search === '' ? (
          'No tracking IDs yet: they appear when events of messages sent with one arrive.'
        ) : (
          <>
            No tracking ID contains <bdi class="literal">{search}</bdi>.
          </>
        )}
      </Empty>
    );
  }
  return (
    <>
      <div class="table-scroll">
        <table class="tracking-ids">
          <caption>Tracking IDs in code-point order, with the share of their messages delivered, bounced and complained</caption>
          <thead>
            <tr>
              <th scope="col">Tracking ID</th>
              <th scope="col" class="number">
                Messages
              </th>
              <th scope="col" class="number">
                Delivered
              </th>
              <th scope="col" class="number">
                Bounced
              </th>
              <th scope="col" class="number">
                Complained
              </th>
              <th scope="col">Last event</th>
            </tr>
          </thead>
          <tbody>
            {items.map((summary) => (
              <TrackingIdRow key={summary.trackingId} summary={summary} />
            ))}
          </tbody>
        </table>
      </div>
      <Pager pages={pages} nextCursor={next_cursor} shown={items.length} label="Pages of tracking IDs" />
    </>
  );
}

function TrackingIdRow({ summary }: { summary: TrackingIdSummary }) {
  const { trackingId, messages } = summary;
  const outcome = (count: number, label: string) => (
    <td class="number" data-label={label}>
      {formatCount(count)} <span class="rate">{formatRate(count, messages)}</span>
    </td>
  );
  return (
    <tr>
      <th scope="row" class="literal">
        <a href={pageHref('messages', { trackingId })} onClick={followLink}>
          <bdi>{trackingId}</bdi>
        </a>
      </th>
      <td class="number" data-label="Messages">
        {formatCount(messages)}
      </td>
      {outcome(summary.delivered, 'Delivered')}
      {outcome(summary.bounced, 'Bounced')}
      {outcome(summary.complained, 'Complained')}
      <td data-label="Last event">
        <time dateTime={summary.lastEventAt}>{formatTime(summary.lastEventAt)}</time>
      </td>
    </tr>
  );
}
