import { createHash } from 'node:crypto';

/**
 * Where the lines of an assembled script come from, in order: each range is [its first line in the
 * script, the file (`lua/….lua`, relative to this package), that line's number in the file, how many
 * lines]. A script is its `.lua` file with each `--@include` line followed by the included file.
 */
export type ScriptLines = readonly (readonly [line: number, file: string, fileLine: number, count: number])[];

/**
 * A Lua script, sent by SHA (EVALSHA) and by its text only when a server answers NOSCRIPT: each server
 * caches it from that first EVAL on. Write scripts start with `#!lua` (Redis 7 flags): while the
 * server is out of memory such a script is refused before it starts, not failed at a write half-way.
 * Read scripts declare `no-writes`, so they run as EVALSHA_RO.
 */
export interface Script {
  name: string;
  lua: string;
  sha: string;
  readOnly: boolean;
  lines: ScriptLines;
}

/** A number a script names as `{{name}}`: a list is written as its items, comma-separated. */
export type ScriptValue = number | readonly number[];

const PLACEHOLDER = /\{\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}\}/g;

/**
 * A script of the generated module (`npm run build:lua` writes it from `lua/`), with its `{{name}}`
 * placeholders filled from `values`, which the generated module takes from core and layout.ts, so a
 * number core owns is never copied by hand. A placeholder without a value throws, at load time.
 */
export function loadScript(
  script: { name: string; readOnly: boolean; lines: ScriptLines; source: string },
  values: Readonly<Record<string, ScriptValue>>,
): Script {
  const lua = script.source.replace(PLACEHOLDER, (_, key: string) => {
    const value = values[key];
    const items = typeof value === 'number' ? [value] : value;
    if (items === undefined || !items.every((item) => Number.isFinite(item))) {
      throw new TypeError(`script ${script.name}: no number for {{${key}}}`);
    }
    return items.join(', ');
  });
  return { name: script.name, lua, sha: createHash('sha1').update(lua).digest('hex'), readOnly: script.readOnly, lines: script.lines };
}

/** The file and line (`lua/include/order.lua:12`) that line `line` of a script comes from, or undefined. */
export function sourceLineOf(script: Script, line: number): string | undefined {
  for (const [first, file, fileLine, count] of script.lines) {
    if (line >= first && line < first + count) return `${file}:${fileLine + line - first}`;
  }
  return undefined;
}

/**
 * A Redis error about a line of the script (`user_script:12`, as Redis 7 names the script it runs) as
 * the same error naming the file and line instead (`lua/applyEvents.lua:40`), the original as its
 * `cause`; any other error as it is.
 */
export function locateScriptError(script: Script, error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const message = error.message.replace(/user_script:(\d+)/g, (found, line: string) => sourceLineOf(script, Number(line)) ?? found);
  if (message === error.message) return error;
  // Same class (ioredis's ReplyError), so whatever tells errors apart by class or name still does.
  let located: Error;
  try {
    located = new (error.constructor as new (message: string) => Error)(message);
  } catch {
    located = new Error(message);
  }
  if (located.message !== message) located = new Error(message);
  // Own fields too (ioredis adds the command to a reply error).
  Object.assign(located, error);
  located.cause = error;
  return located;
}
