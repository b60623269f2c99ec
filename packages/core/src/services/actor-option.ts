import { MailwardenError } from '../errors.js';
import { listedNames } from './listed-names.js';

/** Who makes a write, for the audit trail: every service write method takes it in its options. */
export interface ActorOption {
  /**
   * The change's actor in the feed (`store/actor.ts`: `key:<name>`, `import:<run>`, …). Absent: the
   * change names none. The HTTP handler passes the calling key's (docs/core.md, "Actors").
   */
  actor?: string;
}

/** Segments of printable ASCII other than `:` and space, joined by `:`: what an actor and an actor filter are. */
const ACTOR = /^[!-9;-~]+(?::[!-9;-~]+)*$/;
const MAX_ACTOR_LENGTH = 256;

const isActor = (text: unknown): text is string => typeof text === 'string' && text.length <= MAX_ACTOR_LENGTH && ACTOR.test(text);

/** The actor a write names, checked: `undefined` when none, `invalid_request` for one that cannot be an actor. */
export function actorOf(options: ActorOption | undefined): string | undefined {
  const actor = options?.actor;
  if (actor === undefined || isActor(actor)) return actor;
  throw new MailwardenError('invalid_request', 'Invalid actor: expected segments joined by ":" (key:sending-app), none empty.');
}

/**
 * The actors a feed reader asks for, as given: each an actor or a prefix of whole segments (`key`,
 * `key:ops`, `webhook:ses`), in an array or comma-separated, blanks between commas ignored. Returns
 * them without repeats, or `undefined` when none is named (any actor). Throws `invalid_request` naming
 * the first that cannot be one (an empty segment: `key:`, `:x`).
 *
 * @example
 * parseActorFilter('key:ops,webhook:ses'); // ['key:ops', 'webhook:ses']
 */
export function parseActorFilter(input: string | readonly string[] | undefined): string[] | undefined {
  if (input === undefined) return undefined;
  const wanted = new Set<string>();
  for (const name of listedNames(input, 'Invalid actor: expected actors or their prefixes as text.')) {
    if (!isActor(name))
      throw new MailwardenError(
        'invalid_request',
        `Invalid actor: ${JSON.stringify(name)} is not an actor or a prefix of whole segments (key, key:ops, webhook:ses).`,
        { details: [{ path: 'actor', message: `invalid actor ${JSON.stringify(name)}` }] },
      );
    wanted.add(name);
  }
  return wanted.size === 0 ? undefined : [...wanted];
}
