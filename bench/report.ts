// What a benchmark suite hands back to bench/run.ts, and how it becomes Markdown.

/** One table of figures. Cells are already formatted. */
export interface ReportTable {
  columns: string[];
  rows: string[][];
  /** Per column; numbers read best right-aligned. Default: first column left, the rest right. */
  align?: ('left' | 'right')[];
}

/** A `##` section of docs/performance.md. */
export interface ReportSection {
  title: string;
  /** Paragraphs before the tables: what was measured, and how. */
  intro?: string[];
  tables: ReportTable[];
  /** Paragraphs after the tables. */
  notes?: string[];
}

export interface SuiteContext {
  /** Progress line on stderr. */
  log(message: string): void;
  /** `--quick`: shorter samples, for trying the harness; figures are not written to the doc. */
  quick: boolean;
}

/**
 * A group of benchmarks. Add a suite (Redis, Postgres, HTTP…) by writing `bench/<name>.bench.ts`
 * that exports one, and listing it in `suites` in bench/run.ts.
 */
export interface BenchSuite {
  name: string;
  run(context: SuiteContext): Promise<ReportSection[]>;
}

export function renderSection(section: ReportSection): string {
  const parts = [`## ${section.title}`];
  for (const paragraph of section.intro ?? []) parts.push(paragraph);
  for (const table of section.tables) parts.push(renderTable(table));
  for (const paragraph of section.notes ?? []) parts.push(paragraph);
  return parts.join('\n\n');
}

export function renderTable(table: ReportTable): string {
  const align = table.columns.map((_, i) => table.align?.[i] ?? (i === 0 ? 'left' : 'right'));
  const line = (cells: string[]) => `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(table.columns), `|${align.map((side) => (side === 'right' ? '---:' : ':---')).join('|')}|`, ...table.rows.map(line)].join(
    '\n',
  );
}

// --- formatting -------------------------------------------------------------------------------------

/** 1234567 → "1 234 567" (three significant digits at most below 1 000). */
export function formatCount(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded = Math.abs(value) >= 1000 ? Math.round(value) : Number(value.toPrecision(3));
  const [whole, fraction] = String(rounded).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** Nanoseconds, with a unit that keeps three significant digits: "812 ns", "1.46 µs", "2.31 ms". */
export function formatNanos(ns: number): string {
  if (ns < 1000) return `${ns.toPrecision(3)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toPrecision(3)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toPrecision(3)} ms`;
  return `${(ns / 1e9).toPrecision(3)} s`;
}

export function formatBytes(bytes: number): string {
  if (Math.abs(bytes) < 1024) return `${Math.round(bytes)} B`;
  if (Math.abs(bytes) < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (Math.abs(bytes) < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatRatio(value: number): string {
  return `${value.toFixed(2)}×`;
}

export function formatPercent(fraction: number): string {
  return `±${((fraction * 100) / 2).toFixed(0)} %`;
}
