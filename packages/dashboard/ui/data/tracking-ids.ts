import type { TrackingIdPage } from '@mailwarden/core';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api, ApiError } from '../api.js';
import { asApiError, useLoad } from './load.js';

/** One page of the tracking IDs that contain `search` (all of them for `''`), from `cursor`. */
export function useTrackingIdPage(api: Api, search: string, limit: number, cursor: string | undefined) {
  return useLoad((signal) => api.trackingIds({ search, limit, cursor }, signal), [api, search, limit, cursor]);
}

/** The counters of exactly one tracking ID: a page of it alone, empty when no message carries it. */
export function useTrackingIdSummary(api: Api, trackingId: string) {
  return useLoad((signal) => api.trackingIds({ trackingId }, signal), [api, trackingId]);
}

export interface TrackingIdSearchResult {
  /** The text these options answer. */
  text: string;
  page?: TrackingIdPage;
  error?: ApiError;
}

/**
 * Server-side search for the combobox, at the server's pace: at most one request in flight, and when it
 * answers, the newest text (if it changed meanwhile) goes next. A fixed debounce timer would add its
 * whole delay to every search; this keeps one search per answer and shows only the answer to the text
 * last asked, so a slow, stale answer never replaces a newer one.
 */
export function useTrackingIdSearch(
  api: Api,
  limit: number,
): { result: TrackingIdSearchResult | undefined; wanted: string | undefined; find(text: string): void } {
  const [result, setResult] = useState<TrackingIdSearchResult>();
  const [wanted, setWanted] = useState<string>();
  const state = useRef({ running: false, wanted: undefined as string | undefined, live: true });
  useEffect(() => {
    state.current.live = true;
    return () => {
      state.current.live = false;
    };
  }, []);

  const run = (text: string): void => {
    const current = state.current;
    current.running = true;
    api
      .trackingIds({ search: text, limit })
      .then(
        (page) => current.live && current.wanted === text && setResult({ text, page }),
        (error: unknown) => current.live && current.wanted === text && setResult({ text, error: asApiError(error) }),
      )
      .finally(() => {
        current.running = false;
        if (current.live && current.wanted !== undefined && current.wanted !== text) run(current.wanted);
      });
  };
  const find = (text: string): void => {
    state.current.wanted = text;
    setWanted(text);
    if (!state.current.running) run(text);
  };
  return { result, wanted, find };
}
