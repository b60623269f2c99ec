import { useCallback, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';

export type Loaded<T> =
  | { state: 'loading'; data?: undefined; error?: undefined }
  | { state: 'done'; data: T; error?: undefined }
  | { state: 'failed'; data?: undefined; error: ApiError };

/**
 * Loads with `load` whenever `keys` change, aborting the previous call, so an answer to an old question
 * never replaces a newer one. `reload` asks again (the Retry button, or after a change).
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, keys: readonly unknown[]): Loaded<T> & { reload(): void } {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const latest = useRef(load);
  latest.current = load;
  // A layout effect starts the request as soon as the component is in the DOM; a plain effect would
  // wait for the next paint first (about 10 ms on a first load).
  useLayoutEffect(() => {
    const controller = new AbortController();
    setLoaded({ state: 'loading' });
    latest.current(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setLoaded({ state: 'done', data });
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setLoaded({ state: 'failed', error: asApiError(error) });
      },
    );
    return () => controller.abort();
    // `keys` are the dependencies, not `load`: a new closure each render must not load again.
  }, [...keys, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...loaded, reload };
}

export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : new ApiError(0, 'unexpected_error', error instanceof Error ? error.message : String(error));
}
