import { useState } from 'preact/hooks';
import type { AlertRateView, AlertStatus, EndpointStatus, PausedStreamView } from '@mailwarden/core';
import { useCan } from '../access.js';
import type { Api } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { useAlertStatus, useOutboundEndpoints, usePausedStreams } from '../data/deliverability.js';
import { useSubmission } from '../data/submission.js';
import { docsLinks } from '../docs.js';
import { formatCount, formatFraction, formatTime } from '../format.js';

/** What paused a stream, as people read it. */
export const pauseCauseLabels: Record<PausedStreamView['cause'], string> = {
  'alert.bounce_rate': 'The bounce-rate alert',
  'alert.complaint_rate': 'The complaint-rate alert',
  operator: 'An operator',
};

const endpointStateLabels: Record<EndpointStatus['state'], string> = {
  delivering: 'Delivering',
  retrying: 'Retrying',
  paused: 'Paused',
};

/**
 * Deliverability (docs/dashboard.md, "Deliverability"): the bounce and complaint rates of the project's
 * recent messages against their alert thresholds, the streams the send gate holds back, and where each
 * outbound webhook endpoint stands. Resuming a stream or an endpoint is an operator's call, made here.
 */
export function DeliverabilityPage({ api }: { api: Api }) {
  // Bumped after a resume, so every section shows it at once (a resume changes the feed and the endpoints).
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState('');
  const changed = (message: string) => {
    setNotice(message);
    setVersion((value) => value + 1);
  };
  return (
    <>
      <h1>Deliverability</h1>
      <p class="lead">
        How many of the project’s recent messages hard-bounced or drew a complaint, against the rates at which sending services review an
        account; the streams whose sending is paused; and the outbound webhooks that tell your systems about changes.
      </p>
      <p class="notice" role="status">
        {notice}
      </p>
      <AlertRates api={api} version={version} />
      <PausedStreams api={api} version={version} onResumed={changed} />
      <OutboundEndpoints api={api} version={version} onResumed={changed} />
    </>
  );
}

function AlertRates({ api, version }: { api: Api; version: number }) {
  const status = useAlertStatus(api, version);
  return (
    <section class="section" aria-labelledby="rates-title">
      <h2 id="rates-title">Bounce and complaint rates</h2>
      {status.state === 'loading' ? (
        <Loading>Loading the rates…</Loading>
      ) : status.state === 'failed' ? (
        status.error.code === 'alerts_not_configured' ? (
          <p class="note empty">
            Alerts are not configured for this project, so mailwarden keeps no rates for it.{' '}
            <a href={docsLinks.alerts}>How to configure deliverability alerts</a>
          </p>
        ) : (
          <Failure error={status.error} retry={status.reload} doing="load the rates" />
        )
      ) : (
        <Rates status={status.data} />
      )}
    </section>
  );
}

function Rates({ status }: { status: AlertStatus }) {
  const { window, min_messages, messages } = status;
  return (
    <>
      <p class="window-note">
        Over the last {formatCount(window)} messages the project sent (its window): {formatCount(messages)} so far.
        {messages < min_messages ? ` No alert fires before ${formatCount(min_messages)}.` : ''}
      </p>
      <div class="rates">
        <Rate title="Bounce rate" counted="hard-bounced" rate={status.bounce} messages={messages} enough={messages >= min_messages} />
        <Rate title="Complaint rate" counted="complained" rate={status.complaint} messages={messages} enough={messages >= min_messages} />
      </div>
    </>
  );
}

/**
 * One rate: the figure, a bar with the threshold marked, and the alert's state in words (never by colour
 * alone). The bar's scale reaches past both the rate and the threshold, so the mark always shows.
 */
function Rate({
  title,
  counted,
  rate,
  messages,
  enough,
}: {
  title: string;
  counted: string;
  rate: AlertRateView;
  messages: number;
  enough: boolean;
}) {
  const scale = Math.max(rate.threshold * 2, rate.rate * 1.25);
  // Percent of the bar's width (an SVG: the dashboard's CSP allows no inline styles).
  const at = (value: number) => Math.min(100, (value / scale) * 100);
  const state = rate.firing
    ? `Alert firing: the rate reached the ${formatFraction(rate.threshold)} threshold. It resolves below ${formatFraction(rate.resolve_below)}.`
    : enough
      ? `No alert: below the ${formatFraction(rate.threshold)} threshold.`
      : `No alert: too few messages yet to judge (threshold ${formatFraction(rate.threshold)}).`;
  return (
    <div class={`rate-card${rate.firing ? ' firing' : ''}`}>
      <h3>{title}</h3>
      <p class="rate-figure">
        <strong>{formatFraction(rate.rate)}</strong>
        <span class="note">
          {' '}
          {formatCount(rate.count)} of {formatCount(messages)} {counted}
        </span>
      </p>
      <svg class="rate-bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
        <rect class="bar-track" width="100" height="10" />
        <rect class="rate-fill" width={at(rate.rate)} height="10" />
        <line class="rate-threshold" x1={at(rate.threshold)} x2={at(rate.threshold)} y1="0" y2="10" vector-effect="non-scaling-stroke" />
      </svg>
      <p class="rate-scale note" aria-hidden="true">
        <span>0%</span>
        <span>the line marks the threshold, {formatFraction(rate.threshold)}</span>
        <span>{formatFraction(scale)}</span>
      </p>
      <p class="alert-state">
        <strong>{rate.firing ? 'Firing' : 'OK'}</strong> · {state}
      </p>
    </div>
  );
}

function PausedStreams({ api, version, onResumed }: { api: Api; version: number; onResumed(message: string): void }) {
  const listing = usePausedStreams(api, version);
  const [resuming, setResuming] = useState<PausedStreamView>();
  // Resuming needs `admin`: without it the column is not there at all.
  const canResume = useCan('admin');
  return (
    <section class="section" aria-labelledby="paused-title">
      <h2 id="paused-title">Paused streams</h2>
      {listing.state === 'loading' ? (
        <Loading>Loading the paused streams…</Loading>
      ) : listing.state === 'failed' ? (
        <Failure error={listing.error} retry={listing.reload} doing="load the paused streams" />
      ) : listing.data.items.length === 0 ? (
        <Empty>No stream is paused: the send gate holds back no stream’s mail, only suppressed addresses.</Empty>
      ) : (
        <div class="table-scroll">
          <table class="paused-streams stacked">
            <caption>Streams whose mail the send gate holds back until resumed</caption>
            <thead>
              <tr>
                <th scope="col">Stream</th>
                <th scope="col">Paused</th>
                <th scope="col">By</th>
                {canResume ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {listing.data.items.map((paused) => (
                <tr key={paused.stream}>
                  <th scope="row" class="literal">
                    <bdi>{paused.stream}</bdi>
                  </th>
                  <td data-label="Paused">
                    <time dateTime={paused.paused_at}>{formatTime(paused.paused_at)}</time>
                  </td>
                  <td data-label="By">{pauseCauseLabels[paused.cause]}</td>
                  {canResume ? (
                    <td class="actions">
                      <button type="button" class="quiet" onClick={() => setResuming(paused)}>
                        Resume<span class="visually-hidden"> {paused.stream}</span>
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {resuming === undefined ? null : (
        <ConfirmDialog
          title={`Resume stream ${resuming.stream}?`}
          confirmLabel="Resume"
          doing="resume the stream"
          run={async () =>
            onResumed(
              (await api.streams.resume(resuming.stream))
                ? `Resumed stream ${resuming.stream}: its mail is sent again.`
                : `Stream ${resuming.stream} was no longer paused; nothing changed.`,
            )
          }
          onClose={() => setResuming(undefined)}
        >
          The send gate stops holding back mail of <bdi class="literal">{resuming.stream}</bdi>; suppressed addresses are still held back.
          {resuming.cause === 'operator'
            ? ''
            : ' If the rate that paused it is still high, fix its cause first: resuming does not reset the alert.'}
        </ConfirmDialog>
      )}
    </section>
  );
}

function OutboundEndpoints({ api, version, onResumed }: { api: Api; version: number; onResumed(message: string): void }) {
  const listing = useOutboundEndpoints(api, version);
  const [resume, submit] = useSubmission<void>();
  const canResume = useCan('admin');
  return (
    <section class="section" aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">Outbound webhooks</h2>
      {resume.state === 'failed' ? <Failure error={resume.error} doing="resume the endpoint" /> : null}
      {listing.state === 'loading' ? (
        <Loading>Loading the endpoints…</Loading>
      ) : listing.state === 'failed' ? (
        <Failure error={listing.error} retry={listing.reload} doing="load the outbound webhook endpoints" />
      ) : listing.data.items.length === 0 ? (
        <p class="note empty">
          No outbound webhook endpoint is configured for this project: changes are only read through the API.{' '}
          <a href={docsLinks.outbound}>How to configure outbound webhooks</a>
        </p>
      ) : (
        <div class="table-scroll">
          <table class="endpoints stacked">
            <caption>Endpoints the project’s changes are POSTed to, in order, each from its own cursor</caption>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">State</th>
                <th scope="col">Behind</th>
                <th scope="col">Last success</th>
                <th scope="col">Last error</th>
                <th scope="col">Next attempt</th>
                {canResume ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {listing.data.items.map((endpoint) => (
                <tr key={endpoint.id}>
                  <th scope="row">
                    <span class="literal">{endpoint.id}</span>
                    <span class="endpoint-url literal note">{endpoint.url}</span>
                  </th>
                  <td data-label="State">
                    <span class={`endpoint-state state-${endpoint.state}`}>{endpointStateLabels[endpoint.state]}</span>
                    {endpoint.state === 'paused' && endpoint.paused_at !== null ? (
                      <span class="note"> since {formatTime(endpoint.paused_at)}</span>
                    ) : null}
                  </td>
                  <td data-label="Behind" class="number">
                    {endpoint.lag === 1 ? '1 change' : `${formatCount(endpoint.lag)} changes`}
                  </td>
                  <td data-label="Last success">
                    <Time value={endpoint.last_success_at} none="Never" />
                  </td>
                  <td data-label="Last error">
                    {endpoint.last_error === null ? (
                      <span class="none">None</span>
                    ) : (
                      <span class="diagnostic">
                        {endpoint.last_error}
                        {endpoint.failures > 1 ? ` (${formatCount(endpoint.failures)} failures in a row)` : ''}
                      </span>
                    )}
                  </td>
                  <td data-label="Next attempt">
                    <Time value={endpoint.next_attempt_at} none={endpoint.state === 'paused' ? 'When resumed' : '–'} />
                  </td>
                  {canResume ? (
                    <td class="actions">
                      {endpoint.state === 'paused' ? (
                        <button
                          type="button"
                          class="quiet"
                          disabled={resume.state === 'busy'}
                          onClick={() =>
                            void submit(async () => {
                              await api.outbound.resume(endpoint.id);
                              onResumed(`Resumed ${endpoint.id}: it delivers again from its cursor, losing nothing.`);
                            })
                          }
                        >
                          Resume<span class="visually-hidden"> {endpoint.id}</span>
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Time({ value, none }: { value: string | null; none: string }) {
  return value === null ? <span class="none">{none}</span> : <time dateTime={value}>{formatTime(value)}</time>;
}
