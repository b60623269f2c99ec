// Issue 14's goals in one table: each suite records the figure a goal is about as it measures it, and
// bench/run.ts renders them beside the figure measured before the issue's work began.
import type { ReportSection } from './report.js';

/** How a goal reads a figure: at least, or at most, the target. */
type Direction = 'at least' | 'at most';

interface GoalDefinition {
  /** The row, as issue 14 names it. */
  what: string;
  floor: string;
  direction: Direction;
  target: number;
  /** Renders a figure of this row (a ratio, a rate, bytes, a duration). */
  format: (value: number) => string;
  /** The figure before the work, and where it was measured. */
  before: { text: string; source: string } | undefined;
}

const times = (value: number) => `${value.toFixed(2)}×`;
const perSecond = (value: number) => `${Math.round(value).toLocaleString('en-US').replaceAll(',', ' ')}/s`;
const bytes = (value: number) => `${value.toFixed(0)} B`;
const milliseconds = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;

/** The full `npm run bench` at f2378ba (docs/performance.md of commit 7e0d999): the run before issue 14's changes. */
const BEFORE_RUN = 'full run at f2378ba';
/** Issue 14's own table, for figures that run did not measure. */
const ISSUE = "issue 14's table";

const definitions = {
  'ingest sendgrid': {
    what: '`ingestWebhook`, SendGrid 1 000-event batch, memory store',
    floor: '`JSON.parse` of the same bytes',
    direction: 'at least',
    target: 0.3,
    format: times,
    before: { text: '0.07×', source: BEFORE_RUN },
  },
  'ingest sparkpost': {
    what: '`ingestWebhook`, SparkPost 1 000-event batch',
    floor: '`JSON.parse`',
    direction: 'at least',
    target: 0.3,
    format: times,
    before: undefined,
  },
  'ingest mandrill': {
    what: '`ingestWebhook`, Mandrill 1 000-event form',
    floor: 'form decode + `JSON.parse`',
    direction: 'at least',
    target: 0.3,
    format: times,
    before: { text: '0.20×', source: BEFORE_RUN },
  },
  'ingest resend': {
    what: '`ingestWebhook`, Resend, one event per request',
    floor: '`JSON.parse` + HMAC-SHA256 (Svix)',
    direction: 'at least',
    target: 0.5,
    format: times,
    before: undefined,
  },
  'ingest brevo': {
    what: '`ingestWebhook`, Brevo 1 000 events in batched arrays of 500',
    floor: '`JSON.parse`',
    direction: 'at least',
    target: 0.3,
    format: times,
    before: undefined,
  },
  'ingest mailjet': {
    what: '`ingestWebhook`, Mailjet 1 000-event grouped batch',
    floor: '`JSON.parse`',
    direction: 'at least',
    target: 0.3,
    format: times,
    before: undefined,
  },
  'ingest mailersend': {
    what: '`ingestWebhook`, MailerSend, one event per request',
    floor: '`JSON.parse` + HMAC-SHA256 of the body',
    direction: 'at least',
    target: 0.5,
    format: times,
    before: undefined,
  },
  'ingest postal': {
    what: '`ingestWebhook`, Postal, one event per request',
    floor: '`JSON.parse` + RSA-SHA256 check of the body',
    direction: 'at least',
    target: 0.3,
    format: times,
    before: undefined,
  },
  'ingest postmark': {
    what: '`ingestWebhook`, Postmark, one event per request',
    floor: '`JSON.parse` of each',
    direction: 'at least',
    target: 0.3,
    format: times,
    before: undefined,
  },
  'ingest mailgun': {
    what: '`ingestWebhook`, Mailgun, one event per request',
    floor: '`JSON.parse` + HMAC-SHA256 check',
    direction: 'at least',
    target: 0.5,
    format: times,
    before: undefined,
  },
  'ingest ses': {
    what: '`ingestWebhook`, SES, one event per SNS message',
    floor: '`JSON.parse` ×2 + RSA signature check',
    direction: 'at least',
    target: 0.5,
    format: times,
    before: undefined,
  },
  'ingest ses-eventbridge': {
    what: '`ingestWebhook`, SES via EventBridge, one event per request',
    floor: '`JSON.parse` of each',
    direction: 'at least',
    target: 0.3,
    format: times,
    before: undefined,
  },
  'applyEvents memory new': {
    what: '`applyEvents`, memory, new events (slowest project size)',
    floor: '—',
    direction: 'at least',
    target: 150_000,
    format: perSecond,
    before: { text: '83 405/s', source: BEFORE_RUN },
  },
  'applyEvents memory duplicates': {
    what: '`applyEvents`, memory, duplicates',
    floor: '—',
    direction: 'at least',
    target: 300_000,
    format: perSecond,
    before: { text: '257 276/s', source: BEFORE_RUN },
  },
  'http intake': {
    what: 'HTTP (Fastify), SparkPost 1 000-event batches, new events',
    floor: 'bare route that parses the JSON',
    direction: 'at least',
    target: 0.6,
    format: times,
    before: { text: '0.24×', source: BEFORE_RUN },
  },
  'postgres applyEvents': {
    what: '`applyEvents`, Postgres, time',
    floor: 'the raw statement',
    direction: 'at most',
    target: 1.1,
    format: times,
    before: { text: '2.33×', source: BEFORE_RUN },
  },
  'redis applyEvents hold': {
    what: '`applyEvents`, Redis: longest one script holds the server',
    floor: '—',
    direction: 'at most',
    target: 10,
    format: milliseconds,
    before: { text: '75.8 ms (one script per 1 000-event batch)', source: ISSUE },
  },
  'memory check hit': {
    what: 'memory `check`, hit',
    floor: 'normalize + hash + `Map.get`',
    direction: 'at least',
    target: 0.8,
    format: times,
    before: { text: '0.58×', source: BEFORE_RUN },
  },
  'http batch check fastify': {
    what: 'HTTP batch check of 100, Fastify',
    floor: 'bare route (now normalizing and hashing, see below)',
    direction: 'at least',
    target: 0.7,
    format: times,
    before: { text: '0.47× (bare route without hashing; 186 µs CPU per request)', source: BEFORE_RUN },
  },
  'http batch check express': {
    what: 'HTTP batch check of 100, Express',
    floor: 'bare route (as above)',
    direction: 'at least',
    target: 0.7,
    format: times,
    before: { text: '0.60× (bare route without hashing; 256 µs CPU per request)', source: BEFORE_RUN },
  },
  'redis bytes': {
    what: 'Redis bytes per suppression, 1 000 000',
    floor: '—',
    direction: 'at most',
    target: 200,
    format: bytes,
    before: { text: '358 B', source: BEFORE_RUN },
  },
  'redis search no match': {
    what: 'Redis tracking-ID search, no match, 100 000 IDs, per page',
    floor: '—',
    direction: 'at most',
    target: 20,
    format: milliseconds,
    before: { text: '33.7 ms', source: BEFORE_RUN },
  },
} satisfies Record<string, GoalDefinition>;

export type GoalName = keyof typeof definitions;

const recorded = new Map<GoalName, { value: number; note: string | undefined }>();

/** Records this run's figure for a goal; `note` adds what the figure alone does not say. */
export function recordGoal(name: GoalName, value: number, note?: string): void {
  recorded.set(name, { value, note });
}

/** Whether `value` meets goal `name`. */
export function meets(name: GoalName, value: number): boolean {
  const { direction, target } = definitions[name] as GoalDefinition;
  return direction === 'at least' ? value >= target : value <= target;
}

/** The goal cell of a suite's own table: "≥ 0.30× met" or "≥ 0.30× **missed**". */
export function goalCell(name: GoalName, value: number): string {
  const definition = definitions[name] as GoalDefinition;
  return `${definition.direction === 'at least' ? '≥' : '≤'} ${definition.format(definition.target)} ${meets(name, value) ? 'met' : '**missed**'}`;
}

/** The rows of this run, before beside after, or none when no suite recorded a goal. */
export function goalRows(): string[][] {
  return (Object.entries(definitions) as [GoalName, GoalDefinition][])
    .filter(([name]) => recorded.has(name))
    .map(([name, definition]) => {
      const { value, note } = recorded.get(name)!;
      return [
        definition.what,
        definition.before === undefined ? 'not measured before' : `${definition.before.text} (${definition.before.source})`,
        `${definition.format(value)}${note === undefined ? '' : ` (${note})`}`,
        definition.floor,
        goalCell(name, value),
      ];
    });
}

/** The section of docs/performance.md that puts issue 14's goals before and after, or none when no suite recorded one. */
export function goalsSection(): ReportSection | undefined {
  const rows = goalRows();
  if (rows.length === 0) return undefined;
  return {
    title: 'Issue 14: intake and checks, before and after',
    intro: [
      `Each goal of issue 14 with the figure measured before its work began and the figure of this run, taken from the ` +
        `sections below (where each is described, with its floor measured in the same run). "Before" is the full ` +
        `\`npm run bench\` at f2378ba on this machine type (docs/performance.md of commit 7e0d999), or issue 14's own table ` +
        `where that run had no such row; the in-process rows for SparkPost, Postmark, Mailgun and SES were added during ` +
        `the issue, so they have no before.`,
    ],
    tables: [{ columns: ['row', 'before', 'this run', 'floor', 'goal'], rows }],
    notes: [
      `Intake in process: every receiver hands its events to \`applyEvents\`, whose own cost per event (the memory-store ` +
        `rows below: dedup key, message merge, the project's and the tracking ID's orders, expiry, hour buckets, timeline, ` +
        `suppression) is larger on its own than 0.30× of \`JSON.parse\` allows for the whole intake (\`JSON.parse\` of a ` +
        `SendGrid event takes about 1 µs, so 0.30× leaves about 3 µs per event for everything). The goals are out of ` +
        `reach without storing less per event. The profile of SendGrid intake (300 batches of 1 000, \`--cpu-prof\`) after ` +
        `the work: garbage collection 14 %, \`SortedList.insert\` 12 %, \`mergeMessage\` 10 % (most of it the \`Map\` ` +
        `lookup of the message key), SHA-256 6 %, reading the body 5 %, SendGrid's \`parseItem\` 5 %, the event-key set ` +
        `4 %, timelines 3 %: no frame left is a large share. The zod schema of \`DeliveryEvent\` took 0.8–1.4 µs an event ` +
        `in the profile of \`applyEvents\` alone (half of what recognizing a duplicate cost); a one-pass check of plain ` +
        `events replaced it there. Postmark, one event per request, before: the ` +
        `record's second \`JSON.parse\` and member scan for its \`ID\` 9 %, the shared-secret check 7 % (hashing the ` +
        `configured secret and decoding the Basic token each time); both are gone.`,
      `HTTP batch check: until commit 1481c88 the bare route looked the addresses up as given, so the ratio measured ` +
        `mostly the normalizing and hashing every check must do (about 1 µs an address); the bare routes now do that ` +
        `work too, as the in-process, Redis and Postgres floors do. Server CPU per request does not depend on the floor: ` +
        `before, ours took 186 µs (Fastify) and 256 µs (Express) per batch of 100; this run's figure is beside the ratio. ` +
        `Against the old floor (the bare routes took 85 µs and 173 µs in the run at 11accee), ours would be about 0.55× ` +
        `and 0.75×.`,
      `Postgres: the goal of 1.10× of the raw statement is out of reach for a store that keeps timelines: the raw ` +
        `statement plus the timeline entries alone, no merge and no counters, takes the ratio noted in the row.`,
      `Redis bytes: the order blocks and binary fields cost writes: an add takes about 2.4× the Redis time it took ` +
        `(17.7 µs instead of 7.5 µs) and a bulk merge of 1 000 about 2× (docs/decisions.md, "The Redis suppression layout").`,
    ],
  };
}
