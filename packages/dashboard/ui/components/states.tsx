import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.js';

/** Shown while a call is under way; announced politely. */
export function Loading({ children }: { children: ComponentChildren }) {
  return (
    <p class="note" role="status">
      {children}
    </p>
  );
}

/** A call failed: the API's own message, and a way to try again (`retryLabel`, Retry by default). Announced at once. */
export function Failure({
  error,
  retry,
  retryLabel = 'Retry',
  doing,
}: {
  error: ApiError;
  retry?: () => void;
  retryLabel?: string;
  doing: string;
}) {
  const title =
    error.code === 'store_unavailable'
      ? 'The store is down, so mailwarden cannot answer right now.'
      : error.code === 'network_error'
        ? 'The service did not answer.'
        : `Could not ${doing}.`;
  return (
    <div class="failure" role="alert">
      <p class="failure-title">{title}</p>
      <p>{error.message}</p>
      {retry === undefined ? null : (
        <button type="button" onClick={retry}>
          {retryLabel}
        </button>
      )}
    </div>
  );
}

/** Nothing to show, and why. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="note empty">{children}</p>;
}
