import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CodeBlock {
  doc: string;
  /** 1-based line of the block's first code line in the markdown file. */
  line: number;
  /** The words of the info string: the language first (`ts`, `sh`), then any others (`file=app.ts`, `signature`). */
  info: string[];
  code: string;
  /** The text of the nearest heading above the block; '' before the first heading. */
  heading: string;
}

/** The fenced code blocks of a markdown file (`doc`, relative to `root`), in order, with the line and heading of each. */
export function codeBlocks(root: string, doc: string): CodeBlock[] {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const title = /^#{1,6}\s+(.*?)\s*$/.exec(lines[i]!);
    if (title !== null) heading = title[1]!;
    const open = /^(\s*)(`{3,}|~{3,})\s*([^`]*)$/.exec(lines[i]!);
    if (open === null) continue;
    const [, indent, fence, infoText] = open as unknown as [string, string, string, string];
    const close = i + 1 + lines.slice(i + 1).findIndex((line) => line.trim() === fence);
    const info = infoText.trim().split(/\s+/).filter(Boolean);
    const code = lines
      .slice(i + 1, close)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n');
    blocks.push({ doc, line: i + 2, info, code, heading });
    i = close;
  }
  return blocks;
}
