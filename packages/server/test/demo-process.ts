// `mailwarden serve --demo` started as a user starts it: a process of its own, read through its output.
import { spawn } from 'node:child_process';

export const cliPath = new URL('../src/cli.ts', import.meta.url).pathname;
/** How the tests run the CLI from source: Node with tsx and the workspace's source condition. */
export const cliCommand = [process.execPath, '--import', 'tsx', '--conditions=@mailwarden/source', cliPath] as const;
/** The CLI's environment: none of the developer's own settings. */
export const cleanEnv: NodeJS.ProcessEnv = {
  ...process.env,
  REDIS_URL: '',
  DATABASE_URL: '',
  MAILWARDEN_CONFIG: '',
  MAILWARDEN_API_KEYS: '',
};

export interface DemoProcess {
  /** Everything it printed, stdout and stderr, once its banner ended. */
  readonly output: string;
  /** The base URL and the demo API key, as the banner printed them. */
  readonly url: string;
  readonly key: string;
  /** Everything it has printed so far. */
  outputNow(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `serve --demo` on a free port and resolves once its banner is printed (`Stop with Ctrl-C.`). */
export async function startDemoProcess(env: NodeJS.ProcessEnv = {}): Promise<DemoProcess> {
  const child = spawn(cliCommand[0], [...cliCommand.slice(1), 'serve', '--demo'], {
    env: { ...cleanEnv, PORT: '0', MAILWARDEN_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = () => {
    child.kill('SIGTERM');
    return exited;
  };
  try {
    await waitFor(
      () => output.includes('Stop with Ctrl-C.'),
      () => output,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const url = /listening on (\S+)/.exec(output)?.[1];
  const key = /demo API key: (\S+)/.exec(output)?.[1];
  if (url === undefined || key === undefined) {
    await stop();
    throw new Error(`serve --demo printed no URL or key:\n${output}`);
  }
  return { output, url, key, outputNow: () => output, stop };
}

/** Polls until `condition` holds; a process's output has no event to await. */
async function waitFor(condition: () => boolean, describe: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out; output so far:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
