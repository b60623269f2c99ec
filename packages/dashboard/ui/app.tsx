import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createApi, type ApiError } from './api.js';
import { followLink, navigate, pageHref, pageOf, useLocation } from './location.js';
import { AllowlistPage } from './pages/allowlist.js';
import { ChangesPage } from './pages/changes.js';
import { DeliverabilityPage } from './pages/deliverability.js';
import { MessagesPage } from './pages/messages.js';
import { SignInPage } from './pages/sign-in.js';
import { SuppressionsPage } from './pages/suppressions.js';
import { TrackingIdsPage } from './pages/tracking-ids.js';
import { clearSession, readSession, type Session } from './session.js';
import type { DashboardPage } from '../src/pages.js';

const titles: Record<DashboardPage, string> = {
  messages: 'Messages',
  'tracking-ids': 'Tracking IDs',
  suppressions: 'Suppressions',
  allowlist: 'Allowlist',
  deliverability: 'Deliverability',
  changes: 'Changes',
};

export function App() {
  const [session, setSession] = useState<Session | undefined>(readSession);
  const [signedOutBecause, setSignedOutBecause] = useState<ApiError>();
  const signOut = (because?: ApiError) => {
    clearSession();
    setSignedOutBecause(because);
    setSession(undefined);
  };
  // A 401 from any call (the key was revoked or rotated) ends the session.
  const api = useMemo(() => (session === undefined ? undefined : createApi(session, signOut)), [session]);

  if (session === undefined || api === undefined) {
    return (
      <SignInPage
        notice={signedOutBecause}
        onSignedIn={(next) => {
          setSignedOutBecause(undefined);
          setSession(next);
        }}
      />
    );
  }
  return <SignedIn session={session} api={api} onSignOut={() => signOut()} />;
}

function SignedIn({ session, api, onSignOut }: { session: Session; api: ReturnType<typeof createApi>; onSignOut(): void }) {
  const url = useLocation();
  const shown = pageOf(url);
  const page = shown === 'home' ? 'messages' : shown;
  useEffect(() => {
    if (shown === 'home') navigate(pageHref('messages'), { replace: true });
  }, [shown]);
  // A message opened from the Messages page (`messages?id=…`) is a view of its own.
  const title = page === undefined ? 'Not found' : page === 'messages' && url.searchParams.has('id') ? 'Message' : titles[page];
  useEffect(() => {
    document.title = `${title} · ${session.projectId} · mailwarden`;
  }, [title, session.projectId]);
  // After moving to another page, focus goes to its content, as after a page load.
  const main = useRef<HTMLElement>(null);
  const previous = useRef(page);
  useEffect(() => {
    if (previous.current !== page) main.current?.focus();
    previous.current = page;
  }, [page]);

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">mailwarden</span>
        <nav aria-label="Dashboard">
          {(Object.keys(titles) as DashboardPage[]).map((name) => (
            <a key={name} href={pageHref(name)} onClick={followLink} aria-current={name === page ? 'page' : undefined}>
              {titles[name]}
            </a>
          ))}
        </nav>
        <div class="who">
          <span>
            Project <strong class="literal">{session.projectId}</strong>
          </span>
          <button type="button" class="quiet" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {page === 'messages' ? (
          <MessagesPage api={api} url={url} />
        ) : page === 'tracking-ids' ? (
          <TrackingIdsPage api={api} url={url} />
        ) : page === 'suppressions' ? (
          <SuppressionsPage api={api} url={url} />
        ) : page === 'allowlist' ? (
          <AllowlistPage api={api} url={url} />
        ) : page === 'deliverability' ? (
          <DeliverabilityPage api={api} />
        ) : page === 'changes' ? (
          <ChangesPage api={api} url={url} />
        ) : (
          <h1>Page not found</h1>
        )}
      </main>
    </>
  );
}
