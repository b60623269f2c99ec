import type { ImportProgress } from './import.js';

/** What the progress line needs of a terminal stream; `process.stderr` is one. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  /** 0 or undefined when the terminal does not say (some CI runners, a pseudo-terminal of size 0). */
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
/** The width assumed when the terminal does not give one. */
const DEFAULT_COLUMNS = 80;

/**
 * A one-line import progress display: percent of bytes, rows, rows per second, the time left, and
 * counts. Draws only on a terminal (`stream.isTTY`); elsewhere it does nothing, so logs stay clean.
 *
 * @example
 * const bar = createProgressBar(process.stderr);
 * await importSuppressions(mailwarden, { projectId: 'acme', file: 'bounces.csv', onProgress: bar.update });
 * bar.done();
 */
export function createProgressBar(stream: ProgressStream, now: () => number = Date.now): ProgressBar {
  if (stream.isTTY !== true) return { update() {}, done() {} };
  let first: { time: number; rows: number; bytes: number } | undefined;
  let latest: ImportProgress | undefined;
  let renderedAt = -Infinity;

  const render = (progress: ImportProgress, time: number) => {
    renderedAt = time;
    // From this run's first update: a resumed run starts further on.
    const start = first ?? { time, rows: progress.rows, bytes: progress.bytesRead };
    const seconds = (time - start.time) / 1000;
    const rate = seconds > 0 ? Math.round((progress.rows - start.rows) / seconds) : 0;
    const bytesPerSecond = seconds > 0 ? (progress.bytesRead - start.bytes) / seconds : 0;
    const left = progress.totalBytes - progress.bytesRead;
    const eta = left <= 0 ? '0:00' : bytesPerSecond > 0 ? duration(left / bytesPerSecond) : '--:--';
    const percent = progress.totalBytes > 0 ? (100 * progress.bytesRead) / progress.totalBytes : 100;
    const text =
      `${percent.toFixed(1).padStart(5)}% ${count(progress.rows)} rows, ${count(rate)} rows/s, ETA ${eta} | ` +
      `added ${count(progress.added)}, upgraded ${count(progress.upgraded)}, present ${count(progress.alreadyPresent)}, ` +
      `invalid ${count(progress.invalid)}, skipped ${count(progress.skipped)}`;
    // Cut to the width, or a wrapped line would leave a copy behind at every redraw.
    const columns = stream.columns !== undefined && stream.columns > 0 ? stream.columns : DEFAULT_COLUMNS;
    stream.write(`\r${text.slice(0, Math.max(columns - 1, 1))}\u001b[K`);
  };

  return {
    update(progress) {
      const time = now();
      first ??= { time, rows: progress.rows, bytes: progress.bytesRead };
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

/** `m:ss`, or `h:mm:ss` from an hour on. */
function duration(seconds: number): string {
  const total = Math.ceil(seconds);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const rest = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}
