import { useEffect, useState } from 'preact/hooks';
import { isDashboardPage, type DashboardPage } from '../src/pages.js';

// The app's script lives at `{mount}/dashboard/assets/…`, so the dashboard's root and the API's base
// follow from its own URL under any mount point, whichever page is open. Under Vite's dev server
// (`npm run dev:dashboard`) this module is served from the sources, as `/dashboard/location.ts`.
const up = import.meta.env.DEV ? { root: './', api: '../' } : { root: '../', api: '../../' };
/** `{mount}/dashboard/` */
export const dashboardRoot = new URL(up.root, import.meta.url);
/** `{mount}/`: where the JSON API answers. */
export const apiBase = new URL(up.api, import.meta.url);

/** The page a URL shows: one of the pages, `home` for the dashboard's root, `undefined` for anything else. */
export function pageOf(url: URL): DashboardPage | 'home' | undefined {
  if (!url.pathname.startsWith(dashboardRoot.pathname)) return undefined;
  const name = url.pathname.slice(dashboardRoot.pathname.length);
  if (name === '') return 'home';
  return isDashboardPage(name) ? name : undefined;
}

/** The URL of a page with query parameters; empty and `undefined` values are left out. */
export function pageHref(page: DashboardPage, parameters: Record<string, string | undefined> = {}): string {
  const url = new URL(page, dashboardRoot);
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== '') url.searchParams.set(name, value);
  }
  return url.pathname + url.search;
}

const listeners = new Set<() => void>();

/**
 * Goes to `href` inside the app: a new history entry (back returns), or a replaced one. Going where the
 * page already is replaces, as browsers do for links, so back never needs two steps to leave it.
 */
export function navigate(href: string, { replace = false }: { replace?: boolean } = {}): void {
  if (replace || href === location.pathname + location.search) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  for (const listener of listeners) listener();
}

/** The current URL; re-renders on `navigate` and on back / forward. */
export function useLocation(): URL {
  const [url, setUrl] = useState(() => new URL(location.href));
  useEffect(() => {
    const update = () => setUrl(new URL(location.href));
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return url;
}

/**
 * A click handler for links inside the app: a plain left click navigates without reloading; a click
 * with a modifier (new tab, new window) is left to the browser, since the link's `href` is real.
 */
export function followLink(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = event.currentTarget as HTMLAnchorElement;
  event.preventDefault();
  navigate(link.pathname + link.search);
}
