import { hash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { isDashboardPage } from './pages.js';

export { dashboardPages, type DashboardPage } from './pages.js';

/** A GET or HEAD below the mount point, as the mailwarden HTTP handler passes it on. */
export interface DashboardRequest {
  /** The path below the mount point, still percent-encoded: `/dashboard`, `/dashboard/`, `/dashboard/assets/…`. */
  path: string;
  /** Request headers, lower-case names (`accept-encoding`, `if-none-match` are read). */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** A HEAD request: the same headers, no body. */
  head: boolean;
}

export interface DashboardResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** The dashboard's files, ready to be served; what `createHttpHandler({ dashboard })` takes. */
export interface Dashboard {
  /** The answer for a path under `/dashboard`, or `undefined` when nothing is there (the handler answers 404). */
  serve(request: DashboardRequest): DashboardResponse | undefined;
}

/** How the Express router and the Fastify plugin take it: `true` for the files shipped here, or your own. */
export type DashboardOption = boolean | Dashboard;

/** The dashboard a binding serves for its `dashboard` option: none for `false` or no option. */
export function dashboardFor(option: DashboardOption | undefined): Dashboard | undefined {
  return option === true ? createDashboard() : option || undefined;
}

export interface DashboardOptions {
  /** The folder of the built app; default: the `app/` folder shipped in this package. */
  directory?: string;
}

/**
 * The Content-Security-Policy of the dashboard's HTML: scripts, styles and requests only from the origin
 * that serves it, no inline script or style, no plugins, no framing, no `<base>`, no form posts.
 */
export const dashboardContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** Headers every answer of the dashboard carries. */
const commonHeaders = {
  'x-content-type-options': 'nosniff',
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
};

const htmlHeaders = {
  ...commonHeaders,
  'content-security-policy': dashboardContentSecurityPolicy,
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

interface File {
  contentType: string;
  /** Hashed asset names never change content: cached for a year. Everything else is revalidated. */
  immutable: boolean;
  content: Buffer;
  etag: string;
  gzipped?: Buffer;
}

/**
 * The dashboard's prebuilt files, served from memory: the single-page app at `dashboard/` and at each
 * page's path (`dashboard/messages`…), hashed assets under `dashboard/assets/` cached as immutable, the
 * HTML revalidated (`no-cache`, ETag) and sent with a strict Content-Security-Policy; gzip when the
 * client accepts it. The app reads and writes only through the public JSON API with the API key the
 * person enters, so serving it opens nothing that the API does not.
 *
 * The bindings create one for `dashboard: true`; pass one to `createHttpHandler` to serve it elsewhere.
 *
 * @example
 * const handler = createHttpHandler(mailwarden, { apiKeys, dashboard: createDashboard() });
 */
export function createDashboard(options: DashboardOptions = {}): Dashboard {
  const directory = options.directory ?? fileURLToPath(new URL('../app/', import.meta.url));
  const files = readFiles(directory);
  const html = files.get('index.html');
  if (html === undefined) throw new Error(`The dashboard's index.html is missing in ${directory}.`);

  return {
    serve({ path, headers, head }) {
      if (path === '/dashboard') {
        // Relative, so it holds under any mount point: `{mount}/dashboard` → `{mount}/dashboard/`.
        return { status: 308, headers: { ...commonHeaders, location: 'dashboard/', 'cache-control': 'no-cache' }, body: '' };
      }
      if (!path.startsWith('/dashboard/')) return undefined;
      const name = path.slice('/dashboard/'.length);
      const file = name === '' || isDashboardPage(name) ? html : files.get(name);
      if (file === undefined) return undefined;
      return answer(file, headers, head);
    },
  };
}

function answer(file: File, request: DashboardRequest['headers'], head: boolean): DashboardResponse {
  const headers: Record<string, string> = {
    ...(file.contentType.startsWith('text/html') ? htmlHeaders : commonHeaders),
    'content-type': file.contentType,
    'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    etag: file.etag,
    vary: 'accept-encoding',
  };
  if (matchesEtag(headerText(request['if-none-match']), file.etag)) return { status: 304, headers, body: '' };
  let body: Buffer = file.content;
  if (acceptsGzip(headerText(request['accept-encoding']))) {
    body = file.gzipped ??= gzipSync(file.content, { level: 9 });
    headers['content-encoding'] = 'gzip';
  }
  return { status: 200, headers, body: head ? '' : body };
}

function readFiles(directory: string): Map<string, File> {
  if (!existsSync(directory)) {
    throw new Error(
      `The dashboard's files are missing (${directory}). In the mailwarden repository, build them with ` +
        '`npm run build:app --workspace @mailwarden/dashboard`; the published package ships them.',
    );
  }
  const files = new Map<string, File>();
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder)) {
      const path = join(folder, entry);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const name = relative(directory, path).split(sep).join('/');
      const extension = entry.slice(entry.lastIndexOf('.'));
      const content = readFileSync(path);
      files.set(name, {
        contentType: contentTypes[extension] ?? 'application/octet-stream',
        immutable: name.startsWith('assets/'),
        content,
        etag: `"${hash('sha256', content, 'base64url').slice(0, 22)}"`,
      });
    }
  };
  walk(directory);
  return files;
}

function headerText(value: string | readonly string[] | undefined): string {
  return typeof value === 'string' ? value : (value ?? []).join(',');
}

function matchesEtag(ifNoneMatch: string, etag: string): boolean {
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/** Whether `Accept-Encoding` allows gzip: named (or `*`) without `q=0`. */
function acceptsGzip(acceptEncoding: string): boolean {
  return acceptEncoding.split(',').some((part) => {
    const [coding = '', ...parameters] = part.split(';').map((token) => token.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== '*') return false;
    return !parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter));
  });
}
