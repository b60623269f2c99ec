import { spawn } from 'node:child_process';

export interface Finished {
  command: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of every child: without the `npm_*` variables `npm test` sets, since a nested
 * `npm install` would read `npm_config_local_prefix` and friends and install into the repo instead of
 * the scratch project; without NODE_OPTIONS, so nothing of the runner leaks into what users run.
 */
function childEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(name) || name === 'INIT_CWD' || name === 'NODE_OPTIONS') continue;
    env[name] = value;
  }
  return env;
}

/** Runs a program to its end and collects its output; never rejects for a non-zero exit. */
export function run(file: string, args: readonly string[], options: { cwd: string; input?: string }): Promise<Finished> {
  const command = [file, ...args].join(' ');
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: options.cwd, env: childEnvironment(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => resolve({ command, code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => resolve({ command, code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Like `run`, but a non-zero exit throws with the command and what it printed. */
export async function runOk(file: string, args: readonly string[], options: { cwd: string; input?: string }): Promise<Finished> {
  const finished = await run(file, args, options);
  if (finished.code !== 0) throw new Error(describeFailure(finished));
  return finished;
}

export function describeFailure(finished: Finished): string {
  const output = [finished.stdout.trim(), finished.stderr.trim()].filter(Boolean).join('\n');
  return `\`${finished.command}\` exited with ${finished.code}:\n${output}`;
}
