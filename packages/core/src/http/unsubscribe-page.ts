import type { UnsubscribeTarget } from '../unsubscribe/links.js';
import type { HttpResponse } from './request.js';

/**
 * The Content-Security-Policy of the unsubscribe page: the dashboard's (`dashboardContentSecurityPolicy` of
 * `@mailwarden/dashboard`, which a test holds this to), except that its one form may post to the page
 * itself, which the dashboard, having no form, forbids. The page has no script, style or image at all.
 */
export const unsubscribePageContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': unsubscribePageContentSecurityPolicy,
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  // The URL holds the token: never sent on to another site.
  'referrer-policy': 'no-referrer',
};

/** What the page says is (or was) stopped. The address is never shown: whoever sees the URL must not learn it. */
function whatStops(stream: string | null): string {
  return stream === null ? 'all email from this sender' : `“${escapeHtml(stream)}” email from this sender`;
}

/**
 * What a GET of an unsubscribe link answers: what the button will do, and the button, a plain form that
 * posts the RFC 8058 body to the same URL, so it works without JavaScript. Showing it writes nothing.
 */
export function confirmationPage(target: UnsubscribeTarget): HttpResponse {
  return page(
    'Unsubscribe',
    `<p>Unsubscribe the address this link was sent to from ${whatStops(target.stream)}?</p>
<form method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>`,
  );
}

/** What a POST of an unsubscribe link answers, the first time and every time after. */
export function unsubscribedPage(target: UnsubscribeTarget): HttpResponse {
  return page(
    'You are unsubscribed',
    `<p>The address this link was sent to will no longer receive ${whatStops(target.stream)}.</p>
<p>If this was a mistake, ask the sender to mail you again.</p>`,
  );
}

function page(title: string, content: string): HttpResponse {
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
</head>
<body>
<main>
<h1>${title}</h1>
${content}
</main>
</body>
</html>
`;
  return { status: 200, headers: { ...pageHeaders }, body };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
