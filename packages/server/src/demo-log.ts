/** pino's numeric levels, as the demo names them. */
const levels: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

interface LogRecord {
  level?: number;
  time?: number;
  msg?: string;
  reqId?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
  err?: { message?: string };
}

export interface DemoLog {
  /** What the service's logger writes to: one JSON line at a time. */
  write(line: string): void;
  /** Writes the banner, then the request lines held back until now; later ones are written as they come. */
  printBanner(banner: string): void;
}

/**
 * The log of `serve --demo`, for a person at a terminal: one short line per request
 * (`10:42:07 GET /projects/demo/messages 200 3 ms`) instead of JSON, and no request line before the
 * banner, which would bury it (requests can arrive while the demo data is being written). Lines about
 * the service itself (a warning at start) are written at once.
 */
export function createDemoLog(output: NodeJS.WritableStream = process.stdout): DemoLog {
  let held: string[] | undefined = [];
  return {
    write(line) {
      const text = demoLogLine(line);
      const isRequest = line.includes('"reqId"');
      if (isRequest && held !== undefined) held.push(text);
      else output.write(text);
    },
    printBanner(banner) {
      output.write(banner);
      for (const text of held ?? []) output.write(text);
      held = undefined;
    },
  };
}

/** One JSON log line of the service as the demo prints it; a line that is not JSON as it is. */
export function demoLogLine(line: string): string {
  let record: LogRecord;
  try {
    record = JSON.parse(line) as LogRecord;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const time = new Date(record.time ?? Date.now()).toTimeString().slice(0, 8);
  if (record.msg === 'request completed' && record.req !== undefined) {
    const ms = record.responseTime === undefined ? '' : ` ${Math.round(record.responseTime)} ms`;
    return `${time} ${record.req.method ?? ''} ${record.req.url ?? ''} ${record.res?.statusCode ?? ''}${ms}\n`;
  }
  const level = levels[record.level ?? 30] ?? 'info';
  const error = record.err?.message === undefined ? '' : `: ${record.err.message}`;
  return `${time} ${level === 'info' ? '' : `${level}: `}${record.msg ?? ''}${error}\n`;
}
