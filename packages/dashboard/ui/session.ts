import { dashboardRoot } from './location.js';

/** Who is signed in: a project and the API key that opens it. */
export interface Session {
  projectId: string;
  apiKey: string;
}

// sessionStorage: this tab only, gone when it closes; never the URL, localStorage or a cookie. Keyed by
// the dashboard's path, so two mounts on one origin keep separate sessions.
const storageKey = `mailwarden.dashboard:${dashboardRoot.pathname}`;

export function readSession(): Session | undefined {
  try {
    const value: unknown = JSON.parse(sessionStorage.getItem(storageKey) ?? 'null');
    if (typeof value !== 'object' || value === null) return undefined;
    const { projectId, apiKey } = value as Record<string, unknown>;
    return typeof projectId === 'string' && typeof apiKey === 'string' ? { projectId, apiKey } : undefined;
  } catch {
    return undefined;
  }
}

export function writeSession(session: Session): void {
  sessionStorage.setItem(storageKey, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(storageKey);
}
