import type { ChangeView } from '@mailwarden/core';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { actorSubject } from '../actors.js';
import type { Api } from '../api.js';
import { useAddressHistory } from '../data/changes.js';
import { docsLinks } from '../docs.js';
import { formatCount, formatTime } from '../format.js';
import { reasonText } from '../labels.js';
import { followLink, pageHref } from '../location.js';
import { ChangeSentence } from '../pages/changes.js';
import { listPhrase } from './list-name.js';
import { Empty, Failure, Loading } from './states.js';

/**
 * Who added, upgraded, updated or removed an address's suppressions, and when (docs/dashboard.md,
 * "History"): the change feed filtered to the address, newest first, each change in a sentence naming
 * its actor. A modal `<dialog>` like the removal's; `about` is the suppression's hash, or the address
 * where its hash is not known (a message's recipient).
 */
export function AddressHistoryDialog(props: { api: Api; email: string; about: { hash: string } | { email: string }; onClose(): void }) {
  const { api, email, about, onClose } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const history = useAddressHistory(api, about);
  const hash = 'hash' in about ? about.hash : undefined;
  return (
    <dialog ref={dialog} class="history" aria-labelledby="history-title" onClose={onClose}>
      <h2 id="history-title">
        History of <bdi class="literal">{email}</bdi>
      </h2>
      {history.state === 'loading' ? (
        <Loading>Loading its history…</Loading>
      ) : history.state === 'failed' ? (
        history.error.code === 'change_feed_not_configured' ? (
          <p class="note">
            The history needs the change feed, which is off for this service.{' '}
            <a href={docsLinks.changeFeed}>How to turn on the change feed</a>
          </p>
        ) : (
          <Failure error={history.error} retry={history.reload} doing="load its history" />
        )
      ) : history.data.items.length === 0 ? (
        <Empty>
          No change about this address {history.data.oldestKept ? 'is kept' : 'among the latest changes'}: it was suppressed before the
          change feed recorded it, or retention deleted its changes.
        </Empty>
      ) : (
        <ol class="history-entries">
          {history.data.items.map((change) => (
            <li key={change.seq}>
              <time dateTime={change.at}>{formatTime(change.at)}</time>
              <span class="history-sentence">
                <HistorySentence change={change} />
              </span>
            </li>
          ))}
        </ol>
      )}
      {history.state === 'done' && history.data.from > 0 && !history.data.oldestKept && hash !== undefined ? (
        <p class="note">
          Only the latest changes were searched.{' '}
          <a href={pageHref('changes', { hash, before: String(history.data.from + 1) })} onClick={followLink}>
            Older changes about this address
          </a>
        </p>
      ) : null}
      <div class="dialog-buttons">
        <button type="button" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  );
}

/** "Key ops removed it from the project-wide list"; without an actor, the change alone and that who did it was not recorded. */
function HistorySentence({ change }: { change: ChangeView }) {
  const by = (did: ComponentChildren, done: ComponentChildren) =>
    change.actor === undefined ? (
      <>
        {done} <span class="note">(who did it was not recorded)</span>
      </>
    ) : (
      <>
        <bdi class="actor" title={change.actor}>
          {actorSubject(change.actor)}
        </bdi>{' '}
        {did}
      </>
    );
  switch (change.kind) {
    case 'suppression.added':
    case 'suppression.upgraded':
    case 'suppression.updated':
    case 'suppression.removed':
    case 'suppression.expired': {
      const { suppression, previous } = change;
      const list = listPhrase(suppression.stream ?? undefined);
      const reason = reasonText(suppression.reason, suppression.source);
      if (change.kind === 'suppression.added')
        return by(
          <>
            added it to {list} ({reason})
          </>,
          <>
            Added to {list} ({reason})
          </>,
        );
      if (change.kind === 'suppression.upgraded') {
        const from = previous === undefined ? '' : `${reasonText(previous.reason, previous.source)} → `;
        return by(
          <>
            upgraded it on {list}: {from}
            {reason}
          </>,
          <>
            Upgraded on {list}: {from}
            {reason}
          </>,
        );
      }
      if (change.kind === 'suppression.updated')
        return by(
          <>
            updated it on {list} ({reason})
          </>,
          <>
            Updated on {list} ({reason})
          </>,
        );
      if (change.kind === 'suppression.removed') return by(<>removed it from {list}</>, <>Removed from {list}</>);
      return <>It expired from {list}</>;
    }
    case 'allowlist.added':
      return by(<>added it to the allowlist</>, <>Added to the allowlist</>);
    case 'allowlist.removed':
      return by(<>removed it from the allowlist</>, <>Removed from the allowlist</>);
    case 'address.erased': {
      const deleted = `${formatCount(change.messages)} ${change.messages === 1 ? 'message' : 'messages'} and ${formatCount(change.changes)} ${change.changes === 1 ? 'change' : 'changes'} deleted`;
      return by(<>erased the address ({deleted})</>, <>Erased ({deleted})</>);
    }
    default:
      return <ChangeSentence change={change} />;
  }
}
