import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { ServerConfig } from './config.js';
import { configuredKey, type ConfiguredKeyItem } from './keys.js';

// Reloading the configuration (docs/server.md, "Reloading the configuration"): keys, webhook secrets and
// unsubscribe secrets are swapped while the service runs; anything else needs a restart.

/** A project's settings the service builds once at start: a change to one of them needs a restart. */
const PROJECT_SETTINGS_AT_START = ['defaultStream', 'rules', 'alerts', 'outboundWebhooks'] as const;
/** What a reload swaps: everything else of the configuration needs a restart. */
const RELOADED = new Set(['projects', 'adminApiKeys', 'unsubscribeSecrets']);

/**
 * The settings that differ between `current` and `next` and need a restart, by their paths (`port`,
 * `metrics`, `projects.acme.rules`); none when `next` can be applied by a reload. Unsubscribe secrets may
 * change, not appear or go: links are on or off from the start.
 */
export function restartNeeded(current: ServerConfig, next: ServerConfig): string[] {
  const changed: string[] = [];
  const names = new Set([...Object.keys(current), ...Object.keys(next)]) as Set<keyof ServerConfig>;
  for (const name of [...names].sort()) {
    if (!RELOADED.has(name) && !sameValue(current[name], next[name])) changed.push(name);
  }
  if ((current.unsubscribeSecrets === undefined) !== (next.unsubscribeSecrets === undefined)) changed.push('unsubscribeSecrets');
  const projects = new Set([...Object.keys(current.projects), ...Object.keys(next.projects)]);
  for (const id of [...projects].sort()) {
    for (const setting of PROJECT_SETTINGS_AT_START) {
      if (!sameValue(current.projects[id]?.[setting], next.projects[id]?.[setting])) changed.push(`projects.${id}.${setting}`);
    }
  }
  return changed;
}

/** Key names added, removed and changed (their key or scopes) between two configurations: `acme/sending-app`, `*` for admin keys. */
export function keyNameChanges(current: ServerConfig, next: ServerConfig): { added: string[]; removed: string[]; changed: string[] } {
  const before = namedKeys(current);
  const after = namedKeys(next);
  const added = [...after.keys()].filter((name) => !before.has(name));
  const removed = [...before.keys()].filter((name) => !after.has(name));
  const changed = [...after.keys()].filter((name) => before.has(name) && before.get(name) !== after.get(name));
  return { added, removed, changed };
}

function namedKeys(config: ServerConfig): Map<string, string> {
  const keys = new Map<string, string>();
  const add = (owner: string, items: readonly ConfiguredKeyItem[]) => {
    for (const item of items) {
      const { name, hash, scopes } = configuredKey(item);
      keys.set(`${owner}/${name}`, `${hash} ${scopes?.join(',') ?? ''}`);
    }
  };
  add('*', config.adminApiKeys ?? []);
  for (const [id, { apiKeys = [] }] of Object.entries(config.projects)) add(id, apiKeys);
  return keys;
}

/** Equal as JSON values, whatever the order of an object's keys. */
function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** How long a burst of file events (an editor's write, rename and chmod) is gathered into one reload. */
export const RELOAD_DEBOUNCE_MS = 200;

/**
 * Calls `reload` on SIGHUP, and when `file` changes (debounced). The file's directory is watched, not
 * the file: an editor that saves by writing a new file and renaming it over the old one replaces the
 * watched inode, and a watch on the file would go quiet. Returns a function that stops both.
 */
export function watchConfig(file: string | undefined, reload: (cause: 'SIGHUP' | 'file') => void): () => void {
  const onSignal = () => reload('SIGHUP');
  process.on('SIGHUP', onSignal);
  let watcher: FSWatcher | undefined;
  let pending: ReturnType<typeof setTimeout> | undefined;
  if (file !== undefined && file !== '') {
    const path = resolve(file);
    const name = basename(path);
    watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
      // Some platforms give no name: then any change in the directory may be the file's.
      if (changed !== null && changed !== name) return;
      clearTimeout(pending);
      pending = setTimeout(() => reload('file'), RELOAD_DEBOUNCE_MS);
    });
    // A watch that fails (the directory removed) ends file reloads; SIGHUP still works.
    watcher.on('error', () => watcher?.close());
  }
  return () => {
    process.off('SIGHUP', onSignal);
    clearTimeout(pending);
    watcher?.close();
  };
}
