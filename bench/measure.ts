// The measurement helper of `npm run bench`: warm-up, then several timed samples, median reported.
// No benchmark library: the cases here are microseconds to milliseconds long, and what matters is
// comparing two functions fairly in the same process, which `measureGroup` does by interleaving them.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface MeasureOptions {
  /** Time spent running each case before sampling starts (JIT warm-up), in ms. */
  warmupMs?: number;
  /** Length of one timed sample, in ms. */
  sampleMs?: number;
  /** Samples per case; the median is reported. */
  samples?: number;
  /**
   * Operations per sample instead of a time: for operations that change what the next one costs (each
   * applied batch grows the store), so every run measures the same range. Warm-up is one such sample.
   */
  operationsPerSample?: number;
}

export interface BenchCase<T = void> {
  name: string;
  /**
   * One operation. A function returning a promise is awaited: its figure includes the microtask round
   * trip, as a caller pays it. A synchronous function runs in a plain loop.
   */
  run: (input: T) => unknown;
  /**
   * Builds the input of each operation, outside the timed region. With `setup`, every call is timed on
   * its own (fine for operations of a few microseconds or more); without it, calls run in chunks of
   * about a millisecond between clock reads.
   */
  setup?: () => T;
  /** Work items per operation (e.g. 100 addresses per batch check, 1 000 events per batch). */
  itemsPerOp?: number;
}

export interface Measurement {
  name: string;
  /** Median of the samples. */
  opsPerSecond: number;
  /** `opsPerSecond × itemsPerOp`. */
  itemsPerSecond: number;
  /** Median time of one operation, in nanoseconds. */
  nsPerOp: number;
  /** Median time per work item, in nanoseconds. */
  nsPerItem: number;
  /** (slowest − fastest sample) / median, as a fraction: how noisy the run was. */
  spread: number;
  /** Every sample, in ops/s, in the order taken. */
  samples: number[];
  /** Operations timed, warm-up excluded. */
  operations: number;
}

const defaults = { warmupMs: 400, sampleMs: 300, samples: 7 };

/** Written by every timed call, so the optimizer cannot drop a result nobody reads. */
export let sink: unknown;

interface Runner {
  /** Runs about `targetMs` of operations, or exactly `count` when given; returns [operations, elapsed ms]. */
  run(targetMs: number, count?: number): Promise<[number, number]>;
}

async function prepare<T>(bench: BenchCase<T>): Promise<Runner> {
  const { run, setup } = bench;
  if (setup !== undefined) {
    return {
      async run(targetMs, count) {
        let operations = 0;
        let elapsed = 0;
        while (count === undefined ? elapsed < targetMs : operations < count) {
          const input = setup();
          const start = performance.now();
          const result = run(input);
          sink = isThenable(result) ? await result : result;
          elapsed += performance.now() - start;
          operations++;
        }
        return [operations, elapsed];
      },
    };
  }
  const first = run(undefined as T);
  const isAsync = isThenable(first);
  if (isAsync) sink = await first;
  // Operations per clock read; grows until a chunk takes about a millisecond.
  let chunk = 1;
  const runChunk = isAsync
    ? async (count: number) => {
        for (let i = 0; i < count; i++) sink = await run(undefined as T);
      }
    : (count: number) => {
        for (let i = 0; i < count; i++) sink = run(undefined as T);
      };
  return {
    async run(targetMs, total) {
      let operations = 0;
      const start = performance.now();
      let elapsed = 0;
      while (total === undefined ? elapsed < targetMs : operations < total) {
        const count = total === undefined ? chunk : Math.min(chunk, total - operations);
        const chunkStart = performance.now();
        await runChunk(count);
        const now = performance.now();
        operations += count;
        elapsed = now - start;
        if (now - chunkStart < 1 && chunk < 1 << 20) chunk *= 2;
      }
      return [operations, elapsed];
    },
  };
}

/**
 * Measures cases side by side: each is warmed up, then samples are taken round-robin (A B A B …), so a
 * background load or a frequency change hits every case alike and their ratio stays meaningful.
 */
export async function measureGroup(cases: readonly BenchCase<any>[], options: MeasureOptions = {}): Promise<Measurement[]> {
  const { warmupMs, sampleMs, samples, operationsPerSample } = { ...defaults, ...options };
  collectGarbage();
  const runners: Runner[] = [];
  for (const bench of cases) {
    const runner = await prepare(bench);
    await runner.run(warmupMs, operationsPerSample);
    runners.push(runner);
  }
  const taken: number[][] = cases.map(() => []);
  const counts = cases.map(() => 0);
  for (let round = 0; round < samples; round++) {
    for (let i = 0; i < runners.length; i++) {
      const [operations, elapsed] = await runners[i]!.run(sampleMs, operationsPerSample);
      taken[i]!.push((operations * 1000) / elapsed);
      counts[i]! += operations;
    }
  }
  return cases.map((bench, i) => summarize(bench, taken[i]!, counts[i]!));
}

/** Measures one case. */
export async function measure<T>(bench: BenchCase<T>, options: MeasureOptions = {}): Promise<Measurement> {
  return (await measureGroup([bench], options))[0]!;
}

function summarize(bench: BenchCase<any>, samples: number[], operations: number): Measurement {
  const opsPerSecond = median(samples);
  const items = bench.itemsPerOp ?? 1;
  return {
    name: bench.name,
    opsPerSecond,
    itemsPerSecond: opsPerSecond * items,
    nsPerOp: 1e9 / opsPerSecond,
    nsPerItem: 1e9 / opsPerSecond / items,
    spread: (Math.max(...samples) - Math.min(...samples)) / opsPerSecond,
    samples,
    operations,
  };
}

/**
 * Ratio of two group measurements taken round-robin: the median of the per-round ratios, which cancels
 * slow phases that hit both cases of a round.
 */
export function ratio(ours: Measurement, reference: Measurement): number {
  return median(ours.samples.map((sample, i) => sample / reference.samples[i]!));
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

// --- memory ---------------------------------------------------------------------------------------

let gc: (() => void) | undefined = (globalThis as { gc?: () => void }).gc;

/** Full garbage collection. Uses `--expose-gc` when node has it, else enables it at run time. */
export function collectGarbage(): void {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  // Twice: the first pass can leave objects whose finalization frees more.
  gc();
  gc();
}

export interface LiveBytes {
  /** JS heap objects. */
  heap: number;
  /** ArrayBuffer backing stores, where typed arrays keep their elements. */
  arrayBuffers: number;
  total: number;
}

/** Live JS heap plus ArrayBuffer backing stores (typed arrays live there), after a full collection. */
export function liveBytes(): LiveBytes {
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heap: heapUsed, arrayBuffers, total: heapUsed + arrayBuffers };
}

export interface Retained<T> extends LiveBytes {
  value: T;
  /** How long `build` took. */
  ms: number;
}

/**
 * Bytes that `build` keeps alive: live bytes after it minus before it. The built value is returned,
 * and must be what holds the memory (anything else it allocated is garbage by then).
 */
export function retainedBy<T>(build: () => T): Retained<T> {
  const before = liveBytes();
  const start = performance.now();
  const value = build();
  const ms = performance.now() - start;
  return { value, ms, ...difference(liveBytes(), before) };
}

/** Async form of `retainedBy`. */
export async function retainedByAsync<T>(build: () => Promise<T>): Promise<Retained<T>> {
  const before = liveBytes();
  const start = performance.now();
  const value = await build();
  const ms = performance.now() - start;
  return { value, ms, ...difference(liveBytes(), before) };
}

function difference(after: LiveBytes, before: LiveBytes): LiveBytes {
  return {
    heap: after.heap - before.heap,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
    total: after.total - before.total,
  };
}
