import type { MessageStatus, Provider } from '@mailwarden/core';
import type { Api } from '../api.js';
import { useLoad } from './load.js';

/** The Messages page's filters, as its address has them. */
export interface MessageFilters {
  trackingId: string | null;
  status: MessageStatus | undefined;
  /** The Recipient box: the start of an address, or `@domain`. */
  recipient: string | undefined;
  provider: Provider | undefined;
  /** The Stream box: a stream's whole name. */
  stream: string | undefined;
}

/**
 * The API's filter for the Recipient box: text starting with `@` is a domain (`@example.com`), any other
 * text the start of an address (a whole address included), so partial input is a search, never an error.
 */
export function recipientQuery(text: string | undefined): { recipientPrefix?: string; recipientDomain?: string } {
  if (text === undefined) return {};
  return text.startsWith('@') ? { recipientDomain: text } : { recipientPrefix: text };
}

/** One page of the messages these filters keep, from `cursor` (the first page without one). */
export function useMessagePage(api: Api, filters: MessageFilters, limit: number, cursor: string | undefined) {
  const { trackingId, status, recipient, provider, stream } = filters;
  return useLoad(
    (signal) =>
      api.messages({ trackingId: trackingId ?? undefined, status, ...recipientQuery(recipient), provider, stream, limit, cursor }, signal),
    [api, trackingId, status, recipient, provider, stream, limit, cursor],
  );
}

/** One message with its timeline; `id` is a listed message's `id`. */
export function useMessage(api: Api, id: string) {
  return useLoad((signal) => api.message(id, signal), [api, id]);
}
