import type { ImportProgress } from './import.js';

/** What the progress bar needs of a terminal stream; `process.stderr` is one. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): boolean;
}

export interface ProgressBar {
  /** Pass as `onProgress`. Renders at most every 100 ms. */
  update(progress: ImportProgress): void;
  /** Renders the last update and ends the line. */
  done(): void;
}

const INTERVAL_MS = 100;

/**
 * A one-line import progress display: percent of bytes, lines, lines per second and counts. Draws
 * only on a terminal (`stream.isTTY`); elsewhere it does nothing, so logs stay clean.
 *
 * @example
 * const bar = createProgressBar(process.stderr);
 * await importSuppressions(mailwarden, { projectId: 'acme', file: 'bounces.csv', onProgress: bar.update });
 * bar.done();
 */
export function createProgressBar(stream: ProgressStream, now: () => number = Date.now): ProgressBar {
  if (stream.isTTY !== true) return { update() {}, done() {} };
  let first: { time: number; lines: number } | undefined;
  let latest: ImportProgress | undefined;
  let renderedAt = -Infinity;

  const render = (progress: ImportProgress, time: number) => {
    renderedAt = time;
    const start = first ?? { time, lines: progress.lines };
    const seconds = (time - start.time) / 1000;
    // From this run's first update: a resumed run starts at a later line.
    const rate = seconds > 0 ? Math.round((progress.lines - start.lines) / seconds) : 0;
    const percent = progress.totalBytes > 0 ? (100 * progress.bytesRead) / progress.totalBytes : 100;
    const text =
      `${percent.toFixed(1).padStart(5)}% ${count(progress.lines)} lines, ${count(rate)} lines/s | ` +
      `added ${count(progress.added)}, already ${count(progress.alreadyPresent)}, invalid ${count(progress.invalid)}`;
    // Cut to the width, or a wrapped line would leave a copy behind at every redraw.
    stream.write(`\r${text.slice(0, Math.max((stream.columns ?? 80) - 1, 0))}\u001b[K`);
  };

  return {
    update(progress) {
      const time = now();
      first ??= { time, lines: progress.lines };
      latest = progress;
      if (time - renderedAt >= INTERVAL_MS) render(progress, time);
    },
    done() {
      if (latest === undefined) return;
      render(latest, now());
      stream.write('\n');
    },
  };
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}
