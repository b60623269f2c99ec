import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Where the repository's files are browsed on GitHub; a README on npmjs.com links there, never `../`. */
export const repositoryUrl = 'https://github.com/mailwarden/mailwarden';

const fence = /^(?:```|~~~)/;

/** Markdown without its fenced code blocks, whose text is not links. */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (fence.test(line.trim())) inFence = !inFence;
    else if (!inFence) lines.push(line.replace(/`[^`]*`/g, (code) => code.replace(/[[\]()]/g, ' ')));
  }
  return lines;
}

/** The anchors GitHub (and npmjs.com) gives a document's headings: `## Redis (\`@mailwarden/redis\`)` is `redis-mailwardenredis`. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (fence.test(line.trim())) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Every link and image target of a Markdown document: inline, reference definitions and HTML attributes. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown).join('\n');
  const targets: string[] = [];
  for (const match of text.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
  for (const match of text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) targets.push(match[1]!);
  for (const match of text.matchAll(/\b(?:href|src)\s*=\s*["']([^"']*)["']/g)) targets.push(match[1]!);
  return targets;
}

/**
 * What is wrong with the links of a README shown on npmjs.com: a relative link there points into the
 * registry, not the repo. Allowed: `https:`/`http:`/`mailto:` and anchors of the README's own headings.
 * Links into this repository must name a file or folder that exists, and a heading that exists.
 */
export function brokenReadmeLinks(readme: string, repoRoot: string): string[] {
  const problems: string[] = [];
  const ownAnchors = headingAnchors(readme);
  for (const target of linkTargets(readme)) {
    if (target.startsWith('#')) {
      if (!ownAnchors.has(decodeURIComponent(target.slice(1)))) problems.push(`${target}: no such heading in the README`);
      continue;
    }
    if (/^mailto:/.test(target)) continue;
    if (!/^https?:\/\//.test(target)) {
      problems.push(`${target}: relative, so it breaks on npmjs.com; link ${repositoryUrl}/blob/main/… instead`);
      continue;
    }
    const rest = target.startsWith(repositoryUrl) ? target.slice(repositoryUrl.length) : undefined;
    if (rest === undefined || !/^(?:$|[/#])/.test(rest)) continue;
    // The repository's own pages (issues, releases) are fine; files and folders are checked on main.
    const inRepo = /^\/?(?:#(.*))?$/.test(rest)
      ? ['', 'README.md', /#(.*)$/.exec(rest)?.[1]]
      : /^\/(?:blob|tree)\/main\/([^#?]*)(?:#(.*))?$/.exec(rest);
    if (inRepo === null) {
      if (/^\/(?:blob|tree)\//.test(rest)) problems.push(`${target}: links to a file must point at main`);
      continue;
    }
    const [, path = 'README.md', anchor] = inRepo;
    const file = join(repoRoot, decodeURIComponent(path));
    if (!existsSync(file)) {
      problems.push(`${target}: ${path} does not exist in the repository`);
      continue;
    }
    if (anchor === undefined || anchor === 'readme') continue;
    if (statSync(file).isDirectory() || !file.endsWith('.md'))
      problems.push(`${target}: an anchor on something that is not a Markdown file`);
    else if (!headingAnchors(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor)))
      problems.push(`${target}: no heading #${anchor} in ${path}`);
  }
  return problems;
}
