import { createApi } from '../api.js';
import type { Session } from '../session.js';

/**
 * Tries the session's key on its project's API (one tracking ID asked for), so a wrong key, or another
 * project's key, is refused with the API's own error before anything of the project is shown.
 */
export async function verifySession(session: Session): Promise<void> {
  await createApi(session).trackingIds({ limit: 1 });
}
