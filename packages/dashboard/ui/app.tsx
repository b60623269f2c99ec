import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ApiScope } from '@mailwarden/core';
import { CannotRead, KeyContext, scopeNames } from './access.js';
import { createApi, type ApiError, type ApiKeyInfo } from './api.js';
import { Failure, Loading } from './components/states.js';
import { useApiKeyInfo } from './data/sign-in.js';
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

/** What each page would show, for a key that cannot read it. */
const cannotReadWhat: Record<DashboardPage, string> = {
  messages: 'the messages',
  'tracking-ids': 'the tracking IDs',
  suppressions: 'the suppression lists',
  allowlist: 'the allowlist',
  deliverability: 'the rates, paused streams and outbound endpoints',
  changes: 'the change feed',
};

/** "scopes: read, write"; a key with all four (as one configured without scopes) says so, keeping the header one row. */
function scopesLabel(scopes: readonly ApiScope[]): string {
  if (scopeNames.every((scope) => scopes.includes(scope))) return 'all scopes';
  return `scopes: ${scopes.length === 0 ? 'none' : scopes.join(', ')}`;
}

export function App() {
  const [session, setSession] = useState<Session | undefined>(readSession);
  const [signedOutBecause, setSignedOutBecause] = useState<ApiError>();
  // What the sign-in learnt of the key; after a reload of the tab, asked again.
  const [key, setKey] = useState<ApiKeyInfo>();
  const signOut = (because?: ApiError) => {
    clearSession();
    setSignedOutBecause(because);
    setKey(undefined);
    setSession(undefined);
  };
  // A 401 from any call (the key was revoked or rotated) ends the session.
  const api = useMemo(() => (session === undefined ? undefined : createApi(session, signOut)), [session]);

  if (session === undefined || api === undefined) {
    return (
      <SignInPage
        notice={signedOutBecause}
        onSignedIn={(next, info) => {
          setSignedOutBecause(undefined);
          setKey(info);
          setSession(next);
        }}
      />
    );
  }
  return <SignedIn session={session} api={api} known={key} onSignOut={() => signOut()} />;
}

function SignedIn({
  session,
  api,
  known,
  onSignOut,
}: {
  session: Session;
  api: ReturnType<typeof createApi>;
  known: ApiKeyInfo | undefined;
  onSignOut(): void;
}) {
  const key = useApiKeyInfo(api, known);
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
          {/* Two short lines beside Sign out, so the header stays one row on a laptop. */}
          <div class="identity">
            <span>
              Project <strong class="literal">{session.projectId}</strong>
            </span>
            {key.state === 'done' ? (
              <span class="key">
                Signed in as <strong class="literal">{key.data.name}</strong> · {scopesLabel(key.data.scopes)}
              </span>
            ) : null}
          </div>
          <button type="button" class="quiet" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {key.state === 'loading' ? (
          <Loading>Loading what this key may do…</Loading>
        ) : key.state === 'failed' ? (
          <Failure error={key.error} retry={key.reload} doing="read what this key may do" />
        ) : (
          <KeyContext.Provider value={key.data}>
            {page === undefined ? (
              <h1>Page not found</h1>
            ) : page !== 'suppressions' && !key.data.scopes.includes('read') ? (
              // The Suppressions page still checks addresses (scope `check`); every other page only reads.
              <>
                <h1>{title}</h1>
                <CannotRead what={cannotReadWhat[page]} />
              </>
            ) : page === 'messages' ? (
              <MessagesPage api={api} url={url} />
            ) : page === 'tracking-ids' ? (
              <TrackingIdsPage api={api} url={url} />
            ) : page === 'suppressions' ? (
              <SuppressionsPage api={api} url={url} />
            ) : page === 'allowlist' ? (
              <AllowlistPage api={api} url={url} />
            ) : page === 'deliverability' ? (
              <DeliverabilityPage api={api} />
            ) : (
              <ChangesPage api={api} url={url} />
            )}
          </KeyContext.Provider>
        )}
      </main>
    </>
  );
}
