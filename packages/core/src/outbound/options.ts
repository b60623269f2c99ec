import { Webhook } from 'standardwebhooks';
import { PROJECT_ID } from '../input.js';
import { isMailwardenError } from '../errors.js';
import { parseChangeKinds } from '../services/change-view.js';
import type { ChangeKind } from '../store/changes.js';

/**
 * One receiver of a project's changes (docs/outbound-webhooks.md): each change of its kinds is POSTed to
 * `url`, signed with every secret, in feed order, at least once.
 *
 * @example
 * const endpoint: OutboundEndpoint = {
 *   id: 'crm',
 *   url: 'https://crm.example.com/hooks/mailwarden',
 *   secrets: [process.env.MAILWARDEN_WEBHOOK_SECRET!],
 *   kinds: ['suppression', 'alert'],
 * };
 */
export interface OutboundEndpoint {
  /** Its name in the store, the API and the metrics: 1 to 64 of `a-z`, `0-9`, `_` and `-`, unique in its project. */
  id: string;
  /** Where changes are POSTed: an `http:` or `https:` URL without credentials. Only this URL is ever requested. */
  url: string;
  /** Standard Webhooks secrets (`whsec_` and base64), at least one: each signs every request, for rotation. */
  secrets: readonly string[];
  /** The kinds it receives: kinds (`suppression.added`) or families (`suppression`). Absent or empty: every kind. */
  kinds?: readonly string[];
}

/** How often and how long a timer-driven delivery waits: `setTimeout` by default, a fake one in tests. */
export interface OutboundTimers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * Outbound webhooks (`MailwardenOptions.outbound`): each project's endpoints and how delivery runs. The
 * defaults suit production; delivery starts when the instance is created and stops at `close()`.
 *
 * @example
 * const mailwarden = createMailwarden({
 *   store,
 *   outbound: { endpoints: { acme: [{ id: 'crm', url: 'https://crm.example.com/hooks', secrets: ['whsec_…'] }] } },
 * });
 */
export interface OutboundOptions {
  /** Each project's endpoints, by project id. */
  endpoints: Readonly<Record<string, readonly OutboundEndpoint[]>>;
  /** This instance's name on the leases it holds. Default: a random UUID. */
  owner?: string;
  /** How often each endpoint is looked at, in milliseconds. Default 1 000. */
  pollMs?: number;
  /** How long a lease on an endpoint lasts without renewal (a killed holder's endpoint waits this long); more than `timeoutMs`. Default 30 000. */
  leaseMs?: number;
  /** How long one request may take, answer included, in milliseconds. Default 10 000. */
  timeoutMs?: number;
  /** At most this many bytes of an answer are read. Default 65 536. */
  maxResponseBytes?: number;
  /** The delays in milliseconds before each retry of a failing change; after the last one fails, the endpoint is paused. Default Svix's: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
  schedule?: readonly number[];
  /** For tests only: the `fetch` that makes the requests. Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** For tests only: the timers that drive delivery. Default: `setTimeout`, unref'd. */
  timers?: OutboundTimers;
}

const SECOND = 1000;
const HOUR = 60 * 60 * SECOND;
/** Svix's retry schedule: 27 h 35 min in all, "a day or more" (docs/outbound-webhooks.md#retries). */
export const DEFAULT_OUTBOUND_SCHEDULE: readonly number[] = [
  5 * SECOND,
  5 * 60 * SECOND,
  30 * 60 * SECOND,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

const ENDPOINT_ID = /^[a-z0-9_-]{1,64}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

/** One endpoint as delivery uses it: checked, its kinds expanded (`undefined`: every kind), its signers made. */
export interface CheckedEndpoint {
  projectId: string;
  id: string;
  url: string;
  kinds: ChangeKind[] | undefined;
  signers: Webhook[];
}

export interface CheckedOutbound {
  endpoints: CheckedEndpoint[];
  owner: string;
  pollMs: number;
  leaseMs: number;
  timeoutMs: number;
  maxResponseBytes: number;
  schedule: readonly number[];
  fetch: typeof fetch;
  timers: OutboundTimers;
}

const unrefTimers: OutboundTimers = {
  setTimeout(run, ms) {
    const timer = setTimeout(run, ms);
    // Delivery alone never keeps a process alive.
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Checks `MailwardenOptions.outbound` and fills in its defaults; a `RangeError` names the field. */
export function checkOutboundOptions(options: OutboundOptions): CheckedOutbound {
  const field = (name: string) => `outbound.${name}`;
  const positive = (name: string, value: number | undefined, fallback: number): number => {
    const checked = value ?? fallback;
    if (!Number.isSafeInteger(checked) || checked < 1) throw new RangeError(`${field(name)} must be a positive integer; got ${value}`);
    return checked;
  };
  const pollMs = positive('pollMs', options.pollMs, 1000);
  const timeoutMs = positive('timeoutMs', options.timeoutMs, 10_000);
  const leaseMs = positive('leaseMs', options.leaseMs, 30_000);
  // A request starts only with more than its timeout left on the lease, so no other owner can take it mid-request.
  if (leaseMs <= timeoutMs) throw new RangeError(`${field('leaseMs')} must exceed outbound.timeoutMs; got ${leaseMs} ≤ ${timeoutMs}`);
  const maxResponseBytes = positive('maxResponseBytes', options.maxResponseBytes, 65_536);
  const schedule = options.schedule ?? DEFAULT_OUTBOUND_SCHEDULE;
  if (!Array.isArray(schedule) || schedule.length === 0 || !schedule.every((delay) => Number.isSafeInteger(delay) && delay >= 0))
    throw new RangeError(`${field('schedule')} must be a non-empty array of delays in milliseconds (integers ≥ 0)`);
  const owner = options.owner ?? crypto.randomUUID();
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > 200)
    throw new RangeError(`${field('owner')} must be a string of 1 to 200 characters`);
  if (typeof options.endpoints !== 'object' || options.endpoints === null)
    throw new RangeError(`${field('endpoints')} must be an object of endpoint lists by project id`);
  const endpoints: CheckedEndpoint[] = [];
  for (const [projectId, list] of Object.entries(options.endpoints)) {
    const at = `outbound.endpoints[${JSON.stringify(projectId)}]`;
    if (!PROJECT_ID.test(projectId)) throw new RangeError(`${at}: not a project id (1 to 64 letters, digits, ".", "_" or "-")`);
    if (!Array.isArray(list)) throw new RangeError(`${at} must be an array of endpoints`);
    const ids = new Set<string>();
    for (const [index, endpoint] of list.entries()) {
      const checked = checkEndpoint(projectId, endpoint, `${at}[${index}]`);
      if (ids.has(checked.id)) throw new RangeError(`${at}[${index}].id: ${JSON.stringify(checked.id)} is used twice in the project`);
      ids.add(checked.id);
      endpoints.push(checked);
    }
  }
  return {
    endpoints,
    owner,
    pollMs,
    leaseMs,
    timeoutMs,
    maxResponseBytes,
    schedule: [...schedule],
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    timers: options.timers ?? unrefTimers,
  };
}

function checkEndpoint(projectId: string, endpoint: OutboundEndpoint, at: string): CheckedEndpoint {
  if (typeof endpoint !== 'object' || endpoint === null) throw new RangeError(`${at} must be an object`);
  const { id, url, secrets, kinds } = endpoint;
  if (typeof id !== 'string' || !ENDPOINT_ID.test(id))
    throw new RangeError(`${at}.id must be 1 to 64 of a-z, 0-9, "_" and "-"; got ${JSON.stringify(id)}`);
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {}
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new RangeError(`${at}.url must be an http: or https: URL`);
  if (parsed.username !== '' || parsed.password !== '') throw new RangeError(`${at}.url must not hold credentials`);
  if (!Array.isArray(secrets) || secrets.length === 0) throw new RangeError(`${at}.secrets must be a non-empty array of "whsec_…" secrets`);
  const signers = secrets.map((secret, index) => {
    const problem = `${at}.secrets[${index}] must be "whsec_" followed by base64`;
    if (typeof secret !== 'string' || !SECRET.test(secret)) throw new RangeError(problem);
    try {
      return new Webhook(secret);
    } catch {
      throw new RangeError(problem);
    }
  });
  let expanded: ChangeKind[] | undefined;
  if (kinds !== undefined) {
    if (!Array.isArray(kinds)) throw new RangeError(`${at}.kinds must be an array of change kinds or families`);
    try {
      expanded = kinds.length === 0 ? undefined : parseChangeKinds(kinds);
    } catch (error) {
      if (isMailwardenError(error)) throw new RangeError(`${at}.kinds: ${error.message}`);
      throw error;
    }
  }
  return { projectId, id, url, kinds: expanded, signers };
}
