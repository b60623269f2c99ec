#!/usr/bin/env node
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { createMailwarden, isMailwardenError } from '@mailwarden/core';
import { loadConfig, type ServerConfig } from './config.js';
import { demoBanner, seedDemo, withDemoProject } from './demo.js';
import { retentionMs, startService } from './service.js';
import { openStore } from './store.js';
import { exportSuppressions } from './suppressions-file/export.js';
import { importSuppressions } from './suppressions-file/import.js';
import { createProgressBar } from './suppressions-file/progress.js';
import { sendTestWebhooks } from './webhooks-send.js';

const USAGE = `Usage:
  mailwarden serve [--config <file>] [--demo]
  mailwarden suppressions import <file> --project <id> [--format csv|jsonl] [--restart] [--config <file>]
  mailwarden suppressions export --project <id> [--format csv|jsonl] [--output <file>] [--config <file>]
  mailwarden webhooks send <ses|sendgrid|mailgun|sparkpost|postmark|mandrill> [--url <base or webhook URL>]
      [--project <id>] [--type delivered|bounced|soft-bounced|complained|…] [--to <address>]…
      [--tracking-id <id>] [--count <n>] [--private-key <sendgrid.pem>] [--config <file>]

The store comes from the environment: memory by default, REDIS_URL or DATABASE_URL for the others.
Configuration: a JSON file (--config or MAILWARDEN_CONFIG) and environment variables; see docs/server.md.`;

/** How long in-flight requests may take to finish after SIGTERM before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      demo: { type: 'boolean', default: false },
      project: { type: 'string' },
      format: { type: 'string' },
      output: { type: 'string' },
      restart: { type: 'boolean', default: false },
      url: { type: 'string' },
      type: { type: 'string' },
      to: { type: 'string', multiple: true },
      'tracking-id': { type: 'string' },
      count: { type: 'string' },
      'private-key': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, subcommand, file] = positionals;
  if (values.help || command === undefined) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const config = loadConfig({ file: values.config });
  if (command === 'serve') return serve(config, values.demo);
  if (command === 'webhooks' && subcommand === 'send') {
    if (file === undefined) return usageError('Name the provider: ses, sendgrid, mailgun, sparkpost, postmark or mandrill.');
    const accepted = await sendTestWebhooks(
      config,
      {
        provider: file,
        url: values.url,
        projectId: values.project,
        type: values.type,
        to: values.to,
        trackingId: values['tracking-id'],
        count: values.count,
        privateKeyFile: values['private-key'],
      },
      (line) => console.log(line),
    );
    return accepted ? 0 : 1;
  }
  if (command === 'suppressions' && (subcommand === 'import' || subcommand === 'export')) {
    const projectId = values.project;
    if (projectId === undefined) return usageError('--project is required.');
    const format = values.format;
    if (format !== undefined && format !== 'csv' && format !== 'jsonl') return usageError('--format is csv or jsonl.');
    if (subcommand === 'import') {
      if (file === undefined) return usageError('Name the file to import.');
      return withMailwarden(config, async (mailwarden) => {
        const progress = createProgressBar(process.stderr);
        // Ctrl-C lets the adds in flight finish and writes an exact checkpoint; run again to resume.
        const interrupted = new AbortController();
        const interrupt = () => interrupted.abort(new Error('Interrupted: run the same command again to resume where it stopped.'));
        process.once('SIGINT', interrupt);
        process.once('SIGTERM', interrupt);
        const summary = await importSuppressions(mailwarden, {
          projectId,
          file,
          ...(format === undefined ? {} : { format }),
          ...(values.restart ? { restart: true } : {}),
          onProgress: progress.update,
          signal: interrupted.signal,
        }).finally(() => progress.done());
        console.log(JSON.stringify(summary, null, 2));
        return summary.invalid === 0 ? 0 : 1;
      });
    }
    return withMailwarden(config, async (mailwarden) => {
      const output = values.output === undefined ? process.stdout : createWriteStream(values.output);
      const { exported } = await exportSuppressions(mailwarden, { projectId, format: format ?? 'csv', output });
      if (output !== process.stdout) await new Promise<void>((resolve, reject) => output.end((error?: Error | null) => (error ? reject(error) : resolve())));
      console.error(`Exported ${exported} suppressions of ${projectId}.`);
      return 0;
    });
  }
  return usageError(`Unknown command "${positionals.join(' ')}".`);
}

async function serve(configured: ServerConfig, demo: boolean): Promise<number> {
  const { config, apiKey } = demo ? withDemoProject(configured) : { config: configured, apiKey: undefined };
  const opened = await openStore(process.env, { retentionMs: retentionMs(config) });
  const service = await startService(config, opened).catch(async (error: unknown) => {
    await opened.close();
    throw error;
  });
  if (apiKey !== undefined) {
    await seedDemo(service.mailwarden);
    // Under `npm start` (the repository), the CLI runs from source through the root `mailwarden` script.
    const cli = process.env.npm_lifecycle_event === 'start' ? 'npm run mailwarden --' : 'npx mailwarden';
    process.stdout.write(demoBanner(service.url, apiKey, opened.kind, config.dashboard, cli));
  }
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      service.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
      const forced = setTimeout(() => {
        service.app.log.error('in-flight requests did not finish in time; exiting');
        resolve(1);
      }, SHUTDOWN_GRACE_MS).unref();
      service.close().then(
        () => {
          clearTimeout(forced);
          resolve(0);
        },
        (error: unknown) => {
          service.app.log.error({ err: error }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

async function withMailwarden(config: ServerConfig, run: (mailwarden: ReturnType<typeof createMailwarden>) => Promise<number>): Promise<number> {
  const opened = await openStore(process.env);
  if (opened.kind === 'memory') {
    console.error('mailwarden: warning: no REDIS_URL or DATABASE_URL, so this runs on a memory store that is gone when the command ends.');
  }
  const mailwarden = createMailwarden({
    store: opened.store,
    ...(config.hashKey === undefined ? {} : { hashKey: config.hashKey }),
  });
  try {
    return await run(mailwarden);
  } finally {
    await opened.close();
  }
}

function usageError(message: string): number {
  console.error(`${message}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(isMailwardenError(error) || (error instanceof Error && error.message.startsWith('Interrupted')) ? `mailwarden: ${error.message}` : error);
    process.exit(1);
  },
);
