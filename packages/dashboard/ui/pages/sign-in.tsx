import { useState } from 'preact/hooks';
import type { ApiError, ApiKeyInfo } from '../api.js';
import { Failure } from '../components/states.js';
import { asApiError } from '../data/load.js';
import { verifySession } from '../data/sign-in.js';
import { writeSession, type Session } from '../session.js';

/**
 * Sign in with a project and an API key. The key is tried on the project's API before anything is
 * shown, so a wrong key, or another project's key, shows the API's refusal and nothing of the project.
 */
export function SignInPage({ notice, onSignedIn }: { notice: ApiError | undefined; onSignedIn(session: Session, key: ApiKeyInfo): void }) {
  const [projectId, setProjectId] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(notice);

  const signIn = async () => {
    const session = { projectId: projectId.trim(), apiKey };
    setBusy(true);
    setError(undefined);
    try {
      const key = await verifySession(session);
      writeSession(session);
      onSignedIn(session, key);
    } catch (failure) {
      setError(asApiError(failure));
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>Sign in to mailwarden</h1>
      <p class="lead">
        Use an API key of the project. It stays in this browser tab only and is forgotten when you sign out or close the tab.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void signIn();
        }}
      >
        <div class="field">
          <label for="sign-in-project">Project</label>
          <input
            id="sign-in-project"
            required
            value={projectId}
            spellcheck={false}
            autoComplete="off"
            onInput={(event) => setProjectId(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="sign-in-key">API key</label>
          <input
            id="sign-in-key"
            type="password"
            required
            value={apiKey}
            autoComplete="off"
            onInput={(event) => setApiKey(event.currentTarget.value)}
          />
        </div>
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      {error === undefined ? null : <Failure error={error} doing="sign in" />}
    </main>
  );
}
