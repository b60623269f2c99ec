import { createApi, type Api, type ApiKeyInfo } from '../api.js';
import type { Session } from '../session.js';
import { useLoad } from './load.js';

/**
 * Tries the session's key on its project's API (`GET …/api-key`, which any key of the project may
 * ask), so a wrong key, or another project's key, is refused with the API's own error before anything
 * of the project is shown; answers the key's name and scopes.
 */
export function verifySession(session: Session): Promise<ApiKeyInfo> {
  return createApi(session).apiKey();
}

/** The signed-in key's name and scopes: `known` from the sign-in, else asked (after a reload of the tab). */
export function useApiKeyInfo(api: Api, known: ApiKeyInfo | undefined) {
  return useLoad((signal) => (known === undefined ? api.apiKey(signal) : Promise.resolve(known)), [api]);
}
