import type { MailwardenContext } from './context.js';
import { assertProjectId } from '../input.js';
import { assertStreamName } from '../stream.js';
import { formatTimestamp } from '../timestamp.js';
import type { PausedStreamList, PausedStreamView } from '../api-schemas.js';
import type { PausedStream } from '../store/changes.js';
import { actorOf, type ActorOption } from './actor-option.js';

/**
 * Paused streams (docs/core.md, "Paused streams"): while a stream is paused, the send gate blocks every
 * recipient of a send in that stream (reason `stream_paused`). An alert crossing up may pause streams
 * (`AlertRules.pauseStreams`); only an operator resumes them.
 */
export interface StreamService {
  /**
   * The project's paused streams, by name.
   *
   * @example
   * const { items } = await mailwarden.streams.listPaused('acme');
   */
  listPaused(projectId: string): Promise<PausedStreamList>;
  /**
   * Pauses a stream's sending (cause `operator`); `created` is false when it was already paused (the
   * stored pause, cause and time, is answered). Throws `invalid_stream` for a name that cannot be one.
   *
   * @example
   * await mailwarden.streams.pause('acme', 'marketing');
   */
  pause(projectId: string, stream: string, options?: ActorOption): Promise<{ paused: PausedStreamView; created: boolean }>;
  /**
   * Resumes a paused stream; `resumed` is false when it was not paused.
   *
   * @example
   * await mailwarden.streams.resume('acme', 'marketing'); // { stream: 'marketing', resumed: true }
   */
  resume(projectId: string, stream: string, options?: ActorOption): Promise<{ stream: string; resumed: boolean }>;
}

export function toPausedStreamView(paused: PausedStream): PausedStreamView {
  return { stream: paused.stream, paused_at: formatTimestamp(paused.pausedAt), cause: paused.cause };
}

export function createStreamService(context: MailwardenContext): StreamService {
  const { store } = context;
  return {
    async listPaused(projectId) {
      assertProjectId(projectId);
      const paused = await store.listPausedStreams(projectId);
      return { items: paused.map(toPausedStreamView) };
    },

    async pause(projectId, stream, options) {
      assertProjectId(projectId);
      assertStreamName(stream);
      const actor = actorOf(options);
      const { paused, created } = await store.pauseStream(projectId, stream, Math.trunc(context.now()), actor);
      return { paused: toPausedStreamView(paused), created };
    },

    async resume(projectId, stream, options) {
      assertProjectId(projectId);
      assertStreamName(stream);
      const actor = actorOf(options);
      const resumed = await store.resumeStream(projectId, stream, Math.trunc(context.now()), actor);
      return { stream, resumed: resumed !== undefined };
    },
  };
}
