import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, type CodeBlock } from './markdown-blocks.js';

/**
 * Every ```ts / ```typescript block of the docs compiles against the real packages and the providers'
 * real SDK types. The convention the docs follow:
 *
 * - Each block is a self-contained ES module: it imports what it uses, and declares (`declare const`)
 *   the values the reader brings, such as a request body. Top-level await is allowed.
 * - A block that is deliberately not a program (a listing of signatures or of an interface as the docs
 *   describe it) says so in its info string, ```ts signature, and is skipped, counted below.
 * - A page that shows a program of several files names them, ```ts file=map-store.ts: the blocks of one
 *   page are written side by side, so another block of the page imports it as './map-store.js'.
 *
 * All blocks are typechecked in one TypeScript program (strict, module nodenext, the workspace's own
 * options), from a gitignored folder inside this workspace, so `@mailwarden/*` resolves through the
 * `@mailwarden/source` condition to src/ and the SDKs through node_modules.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const outDir = fileURLToPath(new URL('../.docs-examples/', import.meta.url));

/** The markdown whose examples are checked: provider pages, the other docs, the package READMEs and the root README. */
function markdownFiles(): string[] {
  const inDir = (dir: string) =>
    readdirSync(join(root, dir))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => join(dir, name));
  const readmes = readdirSync(join(root, 'packages'))
    .sort()
    .map((name) => join('packages', name, 'README.md'))
    .filter((path) => {
      try {
        readFileSync(join(root, path));
        return true;
      } catch {
        return false;
      }
    });
  return [...inDir('docs/providers'), ...inDir('docs'), ...readmes, 'README.md'];
}

/** The fenced code blocks in TypeScript of a markdown file, with the line each starts on. */
function typescriptBlocks(doc: string): CodeBlock[] {
  return codeBlocks(root, doc).filter((block) => block.info[0] === 'ts' || block.info[0] === 'typescript');
}

const blocks = markdownFiles().flatMap(typescriptBlocks);
const skipped = blocks.filter((block) => block.info.includes('signature'));
const programs = blocks.filter((block) => !block.info.includes('signature'));
const docs = [...new Set(programs.map((block) => block.doc))];

function moduleFile(block: CodeBlock): string {
  const named = block.info.find((word) => word.startsWith('file='))?.slice('file='.length);
  return join(outDir, block.doc.replace(/[/.]/g, '_'), named ?? `L${block.line}.ts`);
}

/** Diagnostics per doc file, each as `doc:line:column TScode message`. */
const problems = new Map<string, string[]>();

beforeAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const byFile = new Map<string, CodeBlock>();
  for (const block of programs) {
    mkdirSync(dirname(moduleFile(block)), { recursive: true });
    // `export {}` keeps a block without imports a module, so two blocks' top-level names never collide.
    writeFileSync(moduleFile(block), `${block.code}\nexport {};\n`);
    byFile.set(moduleFile(block), block);
  }
  const base = ts.readConfigFile(join(root, 'tsconfig.base.json'), (path) => ts.sys.readFile(path));
  const { options } = ts.parseJsonConfigFileContent(base.config, ts.sys, root);
  const program = ts.createProgram([...byFile.keys()], {
    ...options,
    noEmit: true,
    composite: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
  });
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const block = diagnostic.file === undefined ? undefined : byFile.get(diagnostic.file.fileName);
    const where =
      block === undefined || diagnostic.start === undefined ? undefined : diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start);
    const doc = block?.doc ?? '(no doc)';
    const position =
      block === undefined || where === undefined
        ? (diagnostic.file?.fileName ?? '')
        : `${doc}:${block.line + where.line}:${where.character + 1}`;
    const message = `${position} TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    problems.set(doc, [...(problems.get(doc) ?? []), message]);
  }
}, 120_000);

describe(`docs code blocks: ${programs.length} typechecked in one program, ${skipped.length} signature listings skipped`, () => {
  it.each(docs)('%s compiles', (doc) => {
    expect(problems.get(doc) ?? []).toEqual([]);
  });

  it('nothing outside the doc blocks fails to compile', () => {
    expect(problems.get('(no doc)') ?? []).toEqual([]);
  });

  it('skips only blocks marked as signature listings, and lists them', () => {
    const listed = skipped.map((block) => `${block.doc}:${block.line}`);
    // Shown in the test output: what is deliberately not compiled.
    console.info(
      `docs-examples: ${programs.length} blocks typechecked; ${skipped.length} signature listings skipped:\n  ${listed.join('\n  ')}`,
    );
    for (const block of skipped) expect(block.info).toEqual(expect.arrayContaining(['signature']));
    expect(relative(root, outDir)).toBe(join('packages', 'consumer-checks', '.docs-examples'));
  });
});
