// The Lua scripts as files (lua/, docs/storage-internals.md "Redis scripts"): the committed generated
// module is what the build writes, every script parses as Lua 5.1 (Redis's), uses only the globals Redis
// gives it, and maps each line back to its file. Needs no server; `luac5.1` from Debian's lua5.1 package.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { assembleScripts, buildCommand, buildScriptsModule, generatedPath } from '../scripts/build-lua.js';
import * as scripts from '../src/generated/scripts.js';
import { loadScript, locateScriptError, sourceLineOf, type Script } from '../src/script.js';

const packageRoot = join(import.meta.dirname, '..');
const every = Object.values(scripts);
const fileLines = (file: string) => readFileSync(join(packageRoot, file), 'utf8').split('\n');

/** The Lua 5.1 compiler, the language Redis runs: luac5.1 (Debian), else a luac that says it is 5.1. */
const luac = ['luac5.1', 'luac'].find((bin) => /^Lua 5\.1/.test(spawnSync(bin, ['-v'], { encoding: 'utf8' }).stdout ?? ''));

/** luac over `lua` from standard input; its first line (`#!lua…`, which Redis reads, not Lua) left empty. */
function compile(lua: string, ...options: string[]) {
  if (luac === undefined) {
    throw new Error("no Lua 5.1 compiler (luac5.1): install Debian's lua5.1 package (apt-get install -y lua5.1)");
  }
  const text = lua.startsWith('#!') ? lua.slice(lua.indexOf('\n')) : lua;
  return spawnSync(luac, [...options, '-p', '-'], { input: text, encoding: 'utf8' });
}

/** luac's `stdin:12:` as the file and line of the script it comes from. */
const located = (script: Script, output: string) =>
  output.replace(/stdin:(\d+)/g, (found, line: string) => sourceLineOf(script, Number(line)) ?? found);

test(`src/generated/scripts.ts is what \`${buildCommand}\` writes from lua/`, async () => {
  expect(readFileSync(generatedPath, 'utf8'), `src/generated/scripts.ts is stale: run ${buildCommand}`).toBe(await buildScriptsModule());
});

describe('every script', () => {
  test.each(every.map((script) => [script.name, script] as const))('%s parses as Lua 5.1', (_, script) => {
    const result = compile(script.lua);
    expect(located(script, result.stderr), 'luac').toBe('');
    expect(result.status).toBe(0);
  });

  // Redis refuses a global write and an unknown global read only when the line runs: a helper used
  // but not included (or a forgotten `local`) would otherwise pass every test that misses its branch.
  const redisGlobals = new Set(
    'KEYS ARGV redis cjson cmsgpack bit struct string table math os tonumber tostring type ipairs pairs next unpack select error assert pcall xpcall rawget rawset rawequal getmetatable setmetatable'.split(
      ' ',
    ),
  );
  test.each(every.map((script) => [script.name, script] as const))('%s reads only the globals Redis has, and sets none', (_, script) => {
    const listing = compile(script.lua, '-l');
    expect(listing.status).toBe(0);
    const wrong = [...listing.stdout.matchAll(/\[(\d+)\]\s+(GETGLOBAL|SETGLOBAL)\s.*; (\S+)$/gm)]
      .filter(([, , op, name]) => op === 'SETGLOBAL' || !redisGlobals.has(name!))
      .map(([, line, op, name]) => `${sourceLineOf(script, Number(line))}: ${op === 'SETGLOBAL' ? 'sets' : 'reads'} global ${name}`);
    expect(wrong).toStrictEqual([]);
  });

  test.each(every.map((script) => [script.name, script] as const))('%s: each line maps to its line in lua/', (_, script) => {
    const lines = script.lua.split('\n').slice(0, -1);
    lines.forEach((text, i) => {
      const [file, line] = sourceLineOf(script, i + 1)!.split(':') as [string, string];
      const original = fileLines(file)[Number(line) - 1]!;
      // A placeholder's line holds a number instead.
      if (!original.includes('{{')) expect(text, `${script.name}:${i + 1}`).toBe(original);
    });
    expect(sourceLineOf(script, lines.length + 1)).toBeUndefined();
  });

  test('flags: no-writes exactly for the read-only scripts', () => {
    for (const script of every) expect(script.lua.split('\n')[0], script.name).toBe(script.readOnly ? '#!lua flags=no-writes' : '#!lua');
  });
});

test('every file of lua/ parses as Lua 5.1 on its own (a placeholder {{x}} reads as a table)', () => {
  const files = [
    ...readdirSync(join(packageRoot, 'lua'))
      .filter((name) => name.endsWith('.lua'))
      .map((name) => `lua/${name}`),
    ...readdirSync(join(packageRoot, 'lua/include')).map((name) => `lua/include/${name}`),
  ];
  for (const file of files) {
    const result = compile(readFileSync(join(packageRoot, file), 'utf8'));
    expect(result.stderr.replace(/stdin:/g, `${file}:`), file).toBe('');
  }
});

test('each include is in a script once, before the line that includes it', () => {
  for (const script of assembleScripts()) {
    const includes = script.lines.filter(([, file, fileLine]) => file.startsWith('lua/include/') && fileLine === 1).map(([, file]) => file);
    expect(new Set(includes).size, script.name).toBe(includes.length);
  }
});

describe('loadScript', () => {
  const source = {
    name: 'fixture',
    readOnly: false,
    lines: [[1, 'lua/fixture.lua', 1, 3]] as const,
    source: '#!lua\nlocal a = {{A}}\nlocal b = { {{B.list}} }\n',
  };

  test('fills each placeholder by name: a number, or a list as its items', () => {
    const script = loadScript(source, { A: 7, 'B.list': [1, 2, 4] });
    expect(script.lua).toBe('#!lua\nlocal a = 7\nlocal b = { 1, 2, 4 }\n');
    expect(script.sha).toMatch(/^[0-9a-f]{40}$/);
  });

  test('throws on a placeholder without a number', () => {
    expect(() => loadScript(source, { A: 7 })).toThrow('script fixture: no number for {{B.list}}');
    expect(() => loadScript(source, { A: Number.NaN, 'B.list': [] })).toThrow('{{A}}');
  });
});

describe('locateScriptError', () => {
  class ReplyError extends Error {
    override name = 'ReplyError';
  }

  test("names the file and line of Redis's user_script:N, with the original error as cause", () => {
    const script = scripts.addSuppression;
    const [line, file, fileLine] = script.lines[3]!;
    const original = new ReplyError(`ERR user_script:${line + 1}: boom script: ${script.sha}, on @user_script:${line + 1}.`);
    const error = locateScriptError(script, original) as Error;
    expect(error).toBeInstanceOf(ReplyError);
    expect(error.message).toBe(`ERR ${file}:${fileLine + 1}: boom script: ${script.sha}, on @${file}:${fileLine + 1}.`);
    expect(error.cause).toBe(original);
  });

  test('leaves any other error as it is', () => {
    const error = new Error('Connection is closed.');
    expect(locateScriptError(scripts.addSuppression, error)).toBe(error);
    expect(locateScriptError(scripts.addSuppression, 'text')).toBe('text');
  });
});
