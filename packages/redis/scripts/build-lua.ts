// Writes src/generated/scripts.ts from lua/: `npm run build:lua -w @mailwarden/redis`. test/lua.test.ts
// builds it again in memory and fails when the committed module differs.
//
// A script is lua/<name>.lua, first line `#!lua` or `#!lua flags=no-writes`. A line `--@include "x"`
// is followed, in the assembled script, by lua/include/x.lua (its own includes first), once per script.
// `{{name}}` or `{{name.key}}` is a number that @mailwarden/core/store or src/layout.ts exports: the
// generated module imports it and fills it in when it loads (src/script.ts loadScript).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const generatedPath = join(root, 'src/generated/scripts.ts');
export const buildCommand = 'npm run build:lua -w @mailwarden/redis';

/** The modules a placeholder's first name may come from, as the generated module imports them. */
const valueModules = [
  ['@mailwarden/core/store', () => import('@mailwarden/core/store')],
  ['../layout.js', () => import('../src/layout.js')],
] as const;

const SHEBANG = /^#!lua(?: flags=no-writes)?$/;
const INCLUDE = /^--@include "([A-Za-z]\w*)"$/;
const PLACEHOLDER = /\{\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}\}/g;

/** One line of an assembled script: its text, the file (relative to the package) and its line there. */
interface Line {
  text: string;
  file: string;
  line: number;
}

function linesOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8').replace(/\r\n/g, '\n');
  if (!text.endsWith('\n')) throw new Error(`${file}: no newline at the end`);
  return text.slice(0, -1).split('\n');
}

/** The lines of `file` with its includes expanded; `included` holds the includes already in the script. */
function assemble(file: string, included: Set<string>, open: string[], out: Line[]): void {
  linesOf(file).forEach((text, i) => {
    out.push({ text, file, line: i + 1 });
    const include = INCLUDE.exec(text);
    if (include === null) {
      if (/^\s*--\s*@include/.test(text)) throw new Error(`${file}:${i + 1}: write an include as --@include "name"`);
      return;
    }
    const path = `lua/include/${include[1]}.lua`;
    if (open.includes(path)) throw new Error(`${file}:${i + 1}: ${path} includes itself (${[...open, path].join(' → ')})`);
    if (!existsSync(join(root, path))) throw new Error(`${file}:${i + 1}: no file ${path}`);
    if (included.has(path)) return;
    included.add(path);
    assemble(path, included, [...open, path], out);
  });
}

export interface AssembledScript {
  name: string;
  readOnly: boolean;
  source: string;
  /** As src/script.ts ScriptLines. */
  lines: [number, string, number, number][];
}

/** Every script of lua/, assembled, by name. */
export function assembleScripts(): AssembledScript[] {
  const used = new Set<string>();
  const scripts = readdirSync(join(root, 'lua'))
    .filter((name) => name.endsWith('.lua'))
    .sort()
    .map((name): AssembledScript => {
      const file = `lua/${name}`;
      const out: Line[] = [];
      const included = new Set<string>();
      assemble(file, included, [], out);
      for (const path of included) used.add(path);
      if (!SHEBANG.test(out[0]!.text)) throw new Error(`${file}:1: a script starts with #!lua or #!lua flags=no-writes`);
      const lines: AssembledScript['lines'] = [];
      out.forEach(({ file, line }, i) => {
        const last = lines.at(-1);
        if (last !== undefined && last[1] === file && last[2] + last[3] === line) last[3] += 1;
        else lines.push([i + 1, file, line, 1]);
      });
      return {
        name: name.slice(0, -'.lua'.length),
        readOnly: out[0]!.text.endsWith('no-writes'),
        source: `${out.map((line) => line.text).join('\n')}\n`,
        lines,
      };
    });
  for (const name of readdirSync(join(root, 'lua/include'))) {
    const path = `lua/include/${name}`;
    if (!used.has(path)) throw new Error(`${path}: no script includes it`);
    if (linesOf(path)[0]!.startsWith('#!')) throw new Error(`${path}:1: an include has no #! line (only a script's first line)`);
  }
  return scripts;
}

/** A template literal holding `text` as it is. */
const templateLiteral = (text: string): string => `\`${text.replace(/[\\`]|\$\{/g, (c) => `\\${c}`)}\``;

/** The text of src/generated/scripts.ts. */
export async function buildScriptsModule(): Promise<string> {
  const scripts = assembleScripts();
  const keys = [...new Set(scripts.flatMap((script) => [...script.source.matchAll(PLACEHOLDER)].map((match) => match[1]!)))].sort();
  const imports = new Map<string, Set<string>>(valueModules.map(([specifier]) => [specifier, new Set()]));
  for (const key of keys) {
    const name = key.split('.')[0]!;
    const from: string[] = [];
    for (const [specifier, load] of valueModules) if (name in (await load())) from.push(specifier);
    if (from.length !== 1) {
      const modules = valueModules.map(([specifier]) => specifier).join(', ');
      throw new Error(`{{${key}}}: ${name} is exported by ${from.length === 0 ? 'none' : from.join(' and ')} of ${modules}`);
    }
    imports.get(from[0]!)!.add(name);
  }
  const byName = (a: string, b: string) => a.localeCompare(b, 'en');
  return [
    `// Generated from packages/redis/lua/ by \`${buildCommand}\`: edit the .lua files, not this one.`,
    '// Each script is its file with every `--@include` line followed by the included file; `lines` maps',
    "// the script's lines back to the files. `{{name}}` is filled in from `values` when this module loads.",
    ...[...imports]
      .filter(([, names]) => names.size > 0)
      .map(([specifier, names]) => `import { ${[...names].sort(byName).join(', ')} } from '${specifier}';`),
    "import { loadScript, type ScriptValue } from '../script.js';",
    '',
    'const values = {',
    ...keys.map((key) => (/^\w+$/.test(key) ? `  ${key},` : `  '${key}': ${key},`)),
    '} satisfies Record<string, ScriptValue>;',
    ...scripts.flatMap((script) => [
      '',
      `export const ${script.name} = loadScript(`,
      '  {',
      `    name: '${script.name}',`,
      `    readOnly: ${script.readOnly},`,
      '    lines: [',
      ...script.lines.map(([line, file, fileLine, count]) => `      [${line}, '${file}', ${fileLine}, ${count}],`),
      '    ],',
      `    source: ${templateLiteral(script.source)},`,
      '  },',
      '  values,',
      ');',
    ]),
    '',
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(generatedPath, await buildScriptsModule());
  console.log(`wrote ${generatedPath}`);
}
