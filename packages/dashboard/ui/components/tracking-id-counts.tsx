import type { TrackingIdSummary } from '@mailwarden/core';
import { formatCount, formatRate } from '../format.js';

const outcomes = ['delivered', 'bounced', 'complained'] as const;

/** One tracking ID's messages and outcomes, with rates (each of all its messages) and a bar picture of them. */
export function TrackingIdCounts({ summary }: { summary: TrackingIdSummary }) {
  const { messages } = summary;
  const described = outcomes.map((outcome) => `${outcome} ${formatRate(summary[outcome], messages)}`).join(', ');
  return (
    <section class="counts" aria-labelledby="counts-title">
      <h2 id="counts-title">
        Counts for <bdi class="literal">{summary.trackingId}</bdi>
      </h2>
      <dl class="count-grid">
        <div>
          <dt>Messages</dt>
          <dd>{formatCount(messages)}</dd>
        </div>
        {outcomes.map((outcome) => (
          <div key={outcome} class={`outcome-${outcome}`}>
            <dt>{outcome[0]!.toUpperCase() + outcome.slice(1)}</dt>
            <dd>
              {formatCount(summary[outcome])} <span class="rate">{formatRate(summary[outcome], messages)}</span>
            </dd>
          </div>
        ))}
      </dl>
      <svg
        class="count-bars"
        viewBox="0 0 100 30"
        preserveAspectRatio="none"
        role="img"
        aria-label={`Of ${formatCount(messages)} messages: ${described}`}
      >
        {outcomes.map((outcome, row) => (
          <g key={outcome}>
            <rect class="bar-track" x="0" y={row * 10 + 1} width="100" height="8" />
            <rect
              class={`bar bar-${outcome}`}
              x="0"
              y={row * 10 + 1}
              width={messages === 0 ? 0 : (100 * summary[outcome]) / messages}
              height="8"
            />
          </g>
        ))}
      </svg>
    </section>
  );
}
