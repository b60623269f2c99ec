import type { SuppressionService } from '@mailwarden/core';

/**
 * The part of the suppression service that import and export use: `mailwarden.suppressions` of a
 * store opened here, or a running service reached over HTTP (`remoteSuppressions`).
 */
export type SuppressionTarget = Pick<SuppressionService, 'addMany' | 'checkMany' | 'list'>;
