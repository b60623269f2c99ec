import { normalizeEmail } from '../email/normalize.js';
import { MailwardenError } from '../errors.js';
import { assertProjectId } from '../input.js';
import type { SuppressionService } from '../services/suppression-service.js';
import { assertStreamName } from '../stream.js';
import { unsubscribeActor } from '../store/actor.js';
import { createUnsubscribeTokenCodec, type UnsubscribeTokenCodec } from './token.js';

/** `MailwardenOptions.unsubscribeLinks`: where links point and the secrets that seal their tokens. */
export interface UnsubscribeLinksOptions {
  /**
   * The public URL where the HTTP API is mounted, as a recipient's mail client reaches it (the service's
   * `publicUrl` plus its `basePath`), e.g. `https://mail.example.com/mailwarden`. Or a function read for
   * each link, for a host that learns its address only once it listens (the service's demo on port 0).
   */
  baseUrl: string | (() => string);
  /**
   * Secrets of at least 32 characters. The first seals new tokens; every one opens them, so a new secret
   * goes first and an old one stays listed as long as links made with it may still be clicked. Or a
   * function read for each link and token, for a host that swaps its secrets while running (the service's reload).
   */
  secrets: readonly string[] | (() => readonly string[]);
}

/** A one-click unsubscribe link and the two headers of RFC 8058 that carry it in a message. */
export interface UnsubscribeLink {
  url: string;
  headers: { 'List-Unsubscribe': string; 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}

/** What a link unsubscribes: an address from one stream, or from everything (`stream: null`). */
export interface UnsubscribeTarget {
  /** The normalized address. */
  email: string;
  stream: string | null;
}

export interface UnsubscribeLinks {
  /**
   * A link that unsubscribes `email` from `stream` (without one, from every mail of the project), with
   * its headers. Stateless: nothing is stored until the link is used. Throws `invalid_email`,
   * `invalid_stream`, or `unsubscribe_links_not_configured`.
   *
   * @example
   * const { headers } = mailwarden.unsubscribeLinks.create('acme', { email: 'ana@example.com', stream: 'marketing' });
   * // headers['List-Unsubscribe'] === '<https://mail.example.com/projects/acme/unsubscribe/AZ…>'
   */
  create(projectId: string, request: { email: string; stream?: string }): UnsubscribeLink;
  /**
   * What a token of the project's link unsubscribes, writing nothing (for the page a GET shows).
   * Throws `invalid_unsubscribe_token` for a token that was altered, sealed with an unknown secret,
   * malformed, or made for another project.
   */
  read(projectId: string, token: string): UnsubscribeTarget;
  /**
   * Uses a link: verifies the token as `read` does, then suppresses the address in its stream (or
   * project-wide) with reason `manual` and source `unsubscribe`. Idempotent: when that list already holds
   * the address, nothing changes (`created: false`).
   */
  unsubscribe(projectId: string, token: string): Promise<UnsubscribeTarget & { created: boolean }>;
}

/** The path of a link below the API's mount point: one place for the links made and the route that answers them. */
export function unsubscribePath(projectId: string, token: string): string {
  return `/projects/${encodeURIComponent(projectId)}/unsubscribe/${token}`;
}

/**
 * One-click unsubscribe links (RFC 8058; docs/unsubscribe.md). Without `options`, every call throws
 * `unsubscribe_links_not_configured`.
 */
export function createUnsubscribeLinks(
  options: UnsubscribeLinksOptions | undefined,
  suppressions: Pick<SuppressionService, 'add'>,
): UnsubscribeLinks {
  let configured: { baseUrl: () => string; codec: () => UnsubscribeTokenCodec } | undefined;
  if (options !== undefined) {
    const { baseUrl } = options;
    const fixed = typeof baseUrl === 'string' ? linkBase(baseUrl) : undefined;
    const { secrets } = options;
    // Secrets given as a function: the codec is made again only when the list it returns is another.
    let sealed = typeof secrets === 'function' ? undefined : { secrets, codec: createUnsubscribeTokenCodec(secrets) };
    configured = {
      baseUrl: fixed === undefined ? () => linkBase((baseUrl as () => string)()) : () => fixed,
      codec: () => {
        const current = typeof secrets === 'function' ? secrets() : secrets;
        if (sealed?.secrets !== current) sealed = { secrets: current, codec: createUnsubscribeTokenCodec(current) };
        return sealed.codec;
      },
    };
  }
  const configuration = () => {
    if (configured !== undefined) return configured;
    throw new MailwardenError(
      'unsubscribe_links_not_configured',
      'One-click unsubscribe links are not configured here: give mailwarden unsubscribeLinks (the service: publicUrl and unsubscribeSecrets).',
    );
  };

  function read(projectId: string, token: string): UnsubscribeTarget {
    const contents = configuration().codec().open(token);
    // A token of another project says nothing about this one: refused like a forged one.
    if (contents === undefined || contents.projectId !== projectId) {
      throw new MailwardenError(
        'invalid_unsubscribe_token',
        'This unsubscribe link is not valid: it was changed, or it is not from this service.',
      );
    }
    return { email: contents.email, stream: contents.stream };
  }

  return {
    create(projectId, { email, stream }) {
      assertProjectId(projectId);
      const normalized = normalizeEmail(email);
      if (stream !== undefined) assertStreamName(stream);
      const { baseUrl, codec } = configuration();
      const token = codec().seal({ projectId, stream: stream ?? null, email: normalized });
      const url = `${baseUrl()}${unsubscribePath(projectId, token)}`;
      return { url, headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } };
    },

    read,

    async unsubscribe(projectId, token) {
      const target = read(projectId, token);
      const { created } = await suppressions.add(projectId, target.email, {
        source: 'unsubscribe',
        ...(target.stream === null ? {} : { stream: target.stream }),
        actor: unsubscribeActor(target.stream ?? undefined),
      });
      return { ...target, created };
    },
  };
}

/** A base URL as links start with it: parsed (a `TypeError` if it is none), without a trailing slash. */
function linkBase(baseUrl: string): string {
  return new URL(baseUrl).href.replace(/\/+$/, '');
}
