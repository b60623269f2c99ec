#!/usr/bin/env node
// The `mailwarden` command. Installed from npm it runs the built CLI (dist/cli.js). In a clone of the
// repository it runs the source (src/cli.ts, through tsx), which is always current and needs no build:
// npm links a bin only if its file exists at install time, and dist/ does not exist after `npm ci`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const tsx = existsSync(source) ? resolveTsx() : undefined;

if (tsx === undefined) {
  await import('../dist/cli.js').catch((error) => {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli.js')) throw error;
    console.error('mailwarden: the CLI is not built (no dist/cli.js): run `npm run build` in the repository.');
    process.exit(1);
  });
} else {
  const child = spawn(process.execPath, ['--import', tsx, '--conditions=@mailwarden/source', source, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  // Ctrl-C reaches both processes: the CLI decides what it means (an import stops cleanly), this one waits.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Ended by a signal: end the same way, so the shell sees what happened.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}

/** tsx's loader, where the repository's dev dependencies are installed; undefined elsewhere. */
function resolveTsx() {
  try {
    return import.meta.resolve('tsx');
  } catch {
    return undefined;
  }
}
