import type { MessageDetail, TimelineEntryView } from '@mailwarden/core';
import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useCan } from '../access.js';
import type { Api } from '../api.js';
import { AddressHistoryDialog } from '../components/address-history.js';
import { listPhrase } from '../components/list-name.js';
import { Expiry } from '../components/expiry.js';
import { RemoveSuppressionDialog } from '../components/remove-suppression-dialog.js';
import { Failure, Loading } from '../components/states.js';
import { useMessage } from '../data/messages.js';
import { useSuppressionCheck } from '../data/suppressions.js';
import { formatTime } from '../format.js';
import { eventLabels, providerLabels, reasonText, statusLabels } from '../labels.js';
import { followLink, pageHref } from '../location.js';

/** The most a timeline keeps: past it, the first 20 and the latest 30 events (docs/decisions.md). */
const TIMELINE_CAP = 50;

/**
 * One message, opened from the Messages page at `messages?id=…`: what is known of it and its timeline,
 * oldest first, with what the provider said at each event. `heading` takes the focus when it is opened.
 */
export function MessageView({ api, id, back, heading }: { api: Api; id: string; back: string; heading: Ref<HTMLHeadingElement> }) {
  const message = useMessage(api, id);
  // The recipient's suppression is a check: a key without `check` sees the message alone.
  const canCheck = useCan('check');
  return (
    <article class="message" aria-labelledby="message-title">
      <p class="back">
        <a href={back} onClick={followLink}>
          Back to the messages
        </a>
      </p>
      <h1 id="message-title" ref={heading} tabIndex={-1}>
        Message
      </h1>
      {message.state === 'loading' ? (
        <Loading>Loading the message…</Loading>
      ) : message.state === 'failed' ? (
        message.error.code === 'not_found' || message.error.code === 'invalid_request' ? (
          <div class="failure" role="alert">
            <p class="failure-title">There is no such message in this project.</p>
            <p>
              It was never recorded here, or retention removed it: messages are kept for a limited time, while suppressions and counts
              outlive them.
            </p>
            <p class="note">The API said: {message.error.message}</p>
          </div>
        ) : (
          <Failure error={message.error} retry={message.reload} doing="load the message" />
        )
      ) : (
        <>
          <MessageFacts message={message.data} />
          {canCheck ? <RecipientSuppression api={api} email={message.data.recipient} stream={message.data.stream} /> : null}
          <Timeline timeline={message.data.timeline} />
        </>
      )}
    </article>
  );
}

function MessageFacts({ message }: { message: MessageDetail }) {
  return (
    <dl class="message-facts">
      <div>
        <dt>Recipient</dt>
        <dd class="literal">
          <bdi>{message.recipient}</bdi>
        </dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd>
          <span class={`status status-${message.status}`}>{statusLabels[message.status]}</span>
        </dd>
      </div>
      <div>
        <dt>Tracking ID</dt>
        <dd class="literal">
          {message.trackingId === null ? (
            <span class="none">none</span>
          ) : (
            <a href={pageHref('messages', { trackingId: message.trackingId })} onClick={followLink}>
              <bdi>{message.trackingId}</bdi>
            </a>
          )}
        </dd>
      </div>
      <div>
        <dt>Provider</dt>
        <dd>{providerLabels[message.provider]}</dd>
      </div>
      {message.stream === undefined ? null : (
        <div>
          <dt>Stream</dt>
          <dd class="literal">
            <a href={pageHref('messages', { stream: message.stream })} onClick={followLink}>
              <bdi>{message.stream}</bdi>
            </a>
          </dd>
        </div>
      )}
      <div class="wide">
        <dt>Provider’s message ID</dt>
        <dd class="literal message-id">
          <bdi>{message.messageId}</bdi>
        </dd>
      </div>
      <div>
        <dt>First event</dt>
        <dd>
          <time dateTime={message.firstEventAt}>{formatTime(message.firstEventAt)}</time>
        </dd>
      </div>
      <div>
        <dt>Last event</dt>
        <dd>
          <time dateTime={message.lastEventAt}>{formatTime(message.lastEventAt)}</time>
        </dd>
      </div>
    </dl>
  );
}

/**
 * Whether the message's recipient is suppressed now (the check endpoint; with the message's stream when
 * it has one, so the answer is for mail like it and says which list holds the address), and a way to
 * remove it from that list with the Suppressions page's confirmation. After a removal it says so instead
 * of the stale check; with a stream it checks again, since the other list may still hold the address.
 */
function RecipientSuppression({ api, email, stream }: { api: Api; email: string; stream: string | undefined }) {
  const check = useSuppressionCheck(api, email, stream);
  const [removing, setRemoving] = useState(false);
  const [showingHistory, setShowingHistory] = useState(false);
  const canWrite = useCan('write');
  const [removed, setRemoved] = useState<{ done: boolean; list: string | undefined }>();
  const removal = useRef(false);
  // The button that opened the dialog is gone after a removal: the focus goes to what happened.
  const title = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (removed !== undefined) title.current?.focus();
  }, [removed]);
  const address = <bdi class="literal">{email}</bdi>;
  const forStream =
    stream === undefined ? null : (
      <>
        {' '}
        for stream <bdi class="literal">{stream}</bdi>
      </>
    );
  // The list holding the address: the stream's when the answer names it, else the project-wide one.
  const holder = check.state === 'done' && check.data.suppressed ? (check.data.stream ?? undefined) : undefined;
  const showCheck = removed === undefined || stream !== undefined;
  return (
    <section class="recipient-suppression" aria-labelledby="recipient-suppression-title">
      <h2 id="recipient-suppression-title" ref={title} tabIndex={-1}>
        Suppression
      </h2>
      <div role="status">
        {removed === undefined ? null : stream === undefined ? (
          <p>
            {removed.done ? (
              <>Removed {address} from the suppression list: it is no longer held back from sending.</>
            ) : (
              <>{address} was no longer suppressed; nothing changed.</>
            )}
          </p>
        ) : (
          <p>
            {removed.done ? (
              <>
                Removed {address} from {listPhrase(removed.list)}.
              </>
            ) : (
              <>
                {address} was no longer on {listPhrase(removed.list)}; nothing changed.
              </>
            )}
          </p>
        )}
        {!showCheck ? null : check.state === 'loading' ? (
          <p class="note">Checking the suppression list…</p>
        ) : check.state === 'done' ? (
          <p>
            {address}{' '}
            {check.data.suppressed ? (
              stream === undefined ? (
                <>
                  is suppressed: {reasonText(check.data.reason, check.data.source)}, since {formatTime(check.data.created_at)}
                  {until(check.data.expires_at)}. Sending to it is held back.
                </>
              ) : (
                <>
                  is suppressed{forStream}: {reasonText(check.data.reason, check.data.source)}, since {formatTime(check.data.created_at)}
                  {until(check.data.expires_at)}, on {listPhrase(holder)}. Sending it mail of this stream is held back.
                </>
              )
            ) : (
              <>is not suppressed{forStream}.</>
            )}
          </p>
        ) : null}
      </div>
      {showCheck && check.state === 'failed' ? (
        <Failure error={check.error} retry={check.reload} doing="check the suppression list" />
      ) : null}
      <div class="panel-buttons">
        <button type="button" onClick={() => setShowingHistory(true)}>
          History<span class="visually-hidden"> of the suppressions of {email}</span>
        </button>
        {canWrite && showCheck && check.state === 'done' && check.data.suppressed ? (
          <button type="button" onClick={() => setRemoving(true)}>
            {holder === undefined ? 'Remove from the suppression list' : 'Remove from the stream’s list'}
          </button>
        ) : null}
      </div>
      {showingHistory ? <AddressHistoryDialog api={api} email={email} about={{ email }} onClose={() => setShowingHistory(false)} /> : null}
      {removing && check.state === 'done' && check.data.suppressed ? (
        <RemoveSuppressionDialog
          email={check.data.email}
          reason={reasonText(check.data.reason, check.data.source)}
          stream={holder}
          remove={async () => {
            removal.current = await api.suppressions.removeAddress(email, { stream: holder });
          }}
          onClose={(done) => {
            setRemoving(false);
            if (!done) return;
            setRemoved({ done: removal.current, list: holder });
            if (stream !== undefined) check.reload();
          }}
        />
      ) : null}
    </section>
  );
}

/** ", expires in 29 days" after a suppression's time, when it expires. */
function until(expiresAt: string | undefined) {
  return expiresAt === undefined ? null : (
    <>
      , <Expiry expiresAt={expiresAt} />
    </>
  );
}

function Timeline({ timeline }: { timeline: readonly TimelineEntryView[] }) {
  return (
    <section class="timeline" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      {timeline.length === 0 ? (
        <p class="note empty">No events are kept for this message: messages recorded before mailwarden kept timelines start with none.</p>
      ) : (
        <>
          {timeline.length >= TIMELINE_CAP ? (
            <p class="note">
              A timeline keeps {TIMELINE_CAP} events: past that, the first 20 and the latest 30, so events in between may be missing here.
            </p>
          ) : null}
          <ol class="timeline-entries">
            {timeline.map((entry) => (
              <TimelineEntry key={entry.id} entry={entry} />
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

/** What the provider said about one event, each field only when it said it. */
function detailsOf(entry: TimelineEntryView): [label: string, value: string][] {
  const details: [string, string | undefined][] = [
    ['SMTP status', entry.smtpStatus],
    ['Diagnostic', entry.diagnostic],
    ['Provider’s classification', entry.bounceClassification],
    ['Feedback type', entry.feedbackType],
    ['Reject reason', entry.rejectReason],
    ['On the provider’s own list', entry.providerSuppression],
    ['Link', entry.url],
    ['User agent', entry.userAgent],
  ];
  return details.filter((detail): detail is [string, string] => detail[1] !== undefined);
}

function TimelineEntry({ entry }: { entry: TimelineEntryView }) {
  const details = detailsOf(entry);
  return (
    <li class={`timeline-entry event-${entry.type}`}>
      <p class="entry-head">
        <time dateTime={entry.occurredAt}>{formatTime(entry.occurredAt)}</time>{' '}
        <strong class="entry-type">
          {eventLabels[entry.type]}
          {entry.bounceClass === undefined ? null : ` (${entry.bounceClass})`}
        </strong>{' '}
        <span class="entry-provider">{providerLabels[entry.provider]}</span>
      </p>
      {details.length === 0 ? null : (
        <dl class="entry-details">
          {details.map(([label, value]) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd class="literal">
                <bdi>{value}</bdi>
              </dd>
            </div>
          ))}
        </dl>
      )}
    </li>
  );
}
