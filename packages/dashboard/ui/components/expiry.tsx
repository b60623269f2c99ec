import { formatTime, formatTimeUntil } from '../format.js';

/**
 * When a suppression stops suppressing: "expires in 29 days", with the exact time in its tooltip and for
 * screen readers. The browser's clock says how far; the service's clock decides.
 */
export function Expiry({ expiresAt, capitalized = false }: { expiresAt: string; capitalized?: boolean }) {
  const exact = formatTime(expiresAt);
  return (
    <time dateTime={expiresAt} title={exact}>
      {capitalized ? 'Expires' : 'expires'} {formatTimeUntil(expiresAt)}
      <span class="visually-hidden"> ({exact})</span>
    </time>
  );
}
