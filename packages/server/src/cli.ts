#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createMailwarden, isMailwardenError, isStreamName } from '@mailwarden/core';
import { runAllowlistCommand, remoteAllowlist, type AllowlistTarget } from './allowlist.js';
import { changeFeedOf, loadConfig, suppressionRulesOf, type ServerConfig } from './config.js';
import { openStore } from './store.js';
import { exportFormats, exportSuppressions, type ExportFormat } from './suppressions-file/export.js';
import { importFormats, isImportFormat } from './suppressions-file/import-formats.js';
import { ImportFileError } from './suppressions-file/import-records.js';
import { importSuppressions } from './suppressions-file/import.js';
import { createProgressBar } from './suppressions-file/progress.js';
import { remoteSuppressions, RemoteServiceError } from './suppressions-file/remote.js';
import { replaceFile } from './suppressions-file/replace-file.js';
import type { SuppressionTarget } from './suppressions-file/target.js';

const USAGE = `Usage:
  mailwarden serve [--config <file>] [--demo]
  mailwarden keys new --scopes check,read,write,admin [--name <name>] [--project <id> | --admin]
  mailwarden suppressions import <file> --project <id> [--format <format>] [--stream <name>]
      [--group-stream <group>=<stream>]… [--rejects <file>] [--restart] [--url <service URL> [--api-key <key>]] [--config <file>]
  mailwarden suppressions export --project <id> [--format csv|jsonl|ses-import] [--stream <name>] [--manual-as BOUNCE|COMPLAINT]
      [--output <file>] [--url <service URL> [--api-key <key>]] [--config <file>]
  mailwarden allowlist list --project <id> [--url <service URL> [--api-key <key>]] [--config <file>]
  mailwarden allowlist add|remove <address or @domain>… --project <id> [--url <service URL> [--api-key <key>]] [--config <file>]
  mailwarden webhooks send <ses|sendgrid|mailgun|sparkpost|postmark|mandrill|resend|brevo|mailjet|mailersend|postal|ses-eventbridge>
      [--url <base or webhook URL>]
      [--project <id>] [--type delivered|bounced|soft-bounced|complained|…] [--to <address>]…
      [--tracking-id <id>] [--stream <name>] [--count <n>] [--secret <secret>] [--private-key <sendgrid.pem|postal signing.key>] [--topic-arn <arn>]
      [--unsubscribe-group <SendGrid asm_group_id>] [--topic <SES topic>]
      [--config <file>]
  mailwarden --version

Import formats: ${importFormats.join(', ')} (default: decided from the file).
--stream names the stream's list to import into or export (default: the project-wide list); --group-stream
maps a SendGrid unsubscribe group ID or a Mailgun tag to a stream.
The store comes from the environment: memory by default, REDIS_URL or DATABASE_URL for the others; with
--url, import and export go through a running service instead (key: --api-key or MAILWARDEN_API_KEY).
webhooks send signs with --secret (Mailgun's signing key, Mandrill's webhook key, Resend's whsec_ secret, MailerSend's signing secret,
user:password for Postmark, SparkPost, Brevo, Mailjet and an EventBridge Basic connection), --private-key (SendGrid, Postal) or --topic-arn (SES), else the secrets of --config, else the demo's.
With --type unsubscribe, --unsubscribe-group (SendGrid) and --topic (SES, either route) name the provider's own scope.
keys new prints a new API key once, and the item to paste into the configuration (its hash, never the key).
Configuration: a JSON file (--config or MAILWARDEN_CONFIG) and environment variables; see docs/server.md.
serve reloads keys and webhook and unsubscribe secrets on SIGHUP and when the file changes.`;

/** How long in-flight requests may take to finish after SIGTERM before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

/** A mistake in how the command was called: answered with the usage, exit status 2. */
class UsageError extends Error {
  override readonly name = 'UsageError';
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  const [command, subcommand, file] = positionals;
  if (values.version) {
    console.log(version());
    return 0;
  }
  if (values.help || command === undefined) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  if (command === 'serve') return serve(loadConfig({ file: values.config }), values.demo, values.config);
  if (command === 'keys' && subcommand === 'new') {
    const { newKeyCommand } = await import('./keys-new.js');
    const printed = newKeyCommand({ scopes: values.scopes, name: values.name, projectId: values.project, admin: values.admin });
    if (typeof printed !== 'string') throw new UsageError(printed.usage);
    console.log(printed);
    return 0;
  }
  if (command === 'webhooks' && subcommand === 'send') {
    if (file === undefined)
      throw new UsageError(
        'Name the provider: ses, sendgrid, mailgun, sparkpost, postmark, mandrill, resend, brevo, mailjet, mailersend, postal or ses-eventbridge.',
      );
    const { sendTestWebhooks } = await import('./webhooks-send.js');
    const accepted = await sendTestWebhooks(
      loadConfig({ file: values.config }),
      {
        provider: file,
        url: values.url,
        projectId: values.project,
        type: values.type,
        to: values.to,
        trackingId: values['tracking-id'],
        stream: values.stream,
        count: values.count,
        privateKeyFile: values['private-key'],
        secret: values.secret,
        topicArn: values['topic-arn'],
        unsubscribeGroup: values['unsubscribe-group'],
        topic: values.topic,
      },
      (line) => console.log(line),
    );
    return accepted ? 0 : 1;
  }
  if (command === 'suppressions' && (subcommand === 'import' || subcommand === 'export')) {
    const projectId = values.project;
    if (projectId === undefined) throw new UsageError('--project is required.');
    const format = values.format;
    const remote = remoteOf(values);
    const stream = values.stream;
    if (stream !== undefined && !isStreamName(stream))
      throw new UsageError(`--stream ${JSON.stringify(stream)} is not a stream name: ${STREAM_NAMES}.`);

    if (subcommand === 'import') {
      if (file === undefined) throw new UsageError('Name the file to import.');
      if (format !== undefined && !isImportFormat(format)) throw new UsageError(`--format is one of ${importFormats.join(', ')}.`);
      if (values['manual-as'] !== undefined) throw new UsageError('--manual-as goes with export --format ses-import.');
      // Without --group-stream, the groups the project's SendGrid webhook maps (the same streams its events land in).
      const groupStreams =
        parseGroupStreams(values['group-stream'] ?? []) ?? (stream === undefined ? configuredGroups(values.config, projectId) : undefined);
      if (stream !== undefined && groupStreams !== undefined)
        throw new UsageError('--stream puts every row in one stream: give it or --group-stream, not both.');
      return withTarget(values.config, remote, async (target, targetName) => {
        // A local import writes as `import:<run>` (docs/server.md): the run names this one in the audit trail. A remote one is its key's.
        const run = remote === undefined ? importRun() : undefined;
        const progress = createProgressBar(process.stderr);
        // Ctrl-C lets the batches in flight finish and writes an exact checkpoint; run again to resume.
        const interrupted = new AbortController();
        const interrupt = () => interrupted.abort(new Error('Interrupted: run the same command again to resume where it stopped.'));
        process.once('SIGINT', interrupt);
        process.once('SIGTERM', interrupt);
        const summary = await importSuppressions(target, {
          projectId,
          file,
          targetName,
          // The CLI's own memory store is gone when it ends: there is nothing to resume into.
          ...(targetName === 'memory' ? { checkpoint: false as const } : {}),
          ...(format === undefined ? {} : { format }),
          ...(stream === undefined ? {} : { stream }),
          ...(groupStreams === undefined ? {} : { groupStreams }),
          ...(values.rejects === undefined ? {} : { rejects: values.rejects }),
          ...(values.restart ? { restart: true } : {}),
          ...(run === undefined ? {} : { actor: `import:${run}` }),
          onStart: ({ format: chosen, detectedBy, resumedFromLine }) =>
            console.error(
              `mailwarden: importing ${file} as ${chosen} (${detectedBy === 'given' ? '--format' : `from ${detectedBy}`})` +
                (resumedFromLine === undefined ? '' : `, resuming at line ${resumedFromLine}`),
            ),
          onProgress: progress.update,
          signal: interrupted.signal,
        }).finally(() => progress.done());
        console.log(JSON.stringify(run === undefined ? summary : { ...summary, run }, null, 2));
        return summary.invalid === 0 ? 0 : 1;
      });
    }

    const exportFormat = (format ?? 'csv') as ExportFormat;
    if (!(exportFormats as readonly string[]).includes(exportFormat))
      throw new UsageError(`--format is one of ${exportFormats.join(', ')}.`);
    const manualAs = values['manual-as']?.toUpperCase();
    if (manualAs !== undefined && manualAs !== 'BOUNCE' && manualAs !== 'COMPLAINT')
      throw new UsageError('--manual-as is BOUNCE or COMPLAINT.');
    if (manualAs !== undefined && exportFormat !== 'ses-import') throw new UsageError('--manual-as goes with --format ses-import.');
    if (values['group-stream'] !== undefined) throw new UsageError('--group-stream goes with import.');
    if (stream !== undefined && exportFormat === 'ses-import') {
      throw new UsageError("An SES suppression list is the account's, for every mail: export a stream with --format csv or jsonl.");
    }
    const outputFile = values.output;
    return withTarget(values.config, remote, async (target) => {
      // Ctrl-C stops between pages: the temporary file is removed and --output is left as it was.
      const interrupted = new AbortController();
      const interrupt = () => interrupted.abort(new Error(`Interrupted: ${outputFile ?? 'the output'} was left as it was.`));
      process.once('SIGINT', interrupt);
      process.once('SIGTERM', interrupt);
      const exportTo = (output: NodeJS.WritableStream) =>
        exportSuppressions(target, {
          projectId,
          format: exportFormat,
          output,
          signal: interrupted.signal,
          ...(manualAs === undefined ? {} : { manualAs }),
          ...(stream === undefined ? {} : { stream }),
        });
      // A failed export leaves a previous --output file byte for byte: it is replaced only once complete.
      const { exported, skipped } = await (outputFile === undefined ? exportTo(process.stdout) : replaceFile(outputFile, exportTo));
      console.error(`Exported ${exported} suppressions of ${projectId}${stream === undefined ? '' : `, stream ${stream}`}.`);
      if (skipped > 0) {
        console.error(
          `Left out ${skipped} manual suppressions: SES has no reason for them. To keep them suppressed at SES, export again with --manual-as BOUNCE (or COMPLAINT).`,
        );
      }
      return 0;
    });
  }
  if (command === 'allowlist' && (subcommand === 'list' || subcommand === 'add' || subcommand === 'remove')) {
    const projectId = values.project;
    if (projectId === undefined) throw new UsageError('--project is required.');
    const entries = positionals.slice(2);
    if (subcommand === 'list' && entries.length > 0) throw new UsageError('allowlist list takes no entries.');
    if (subcommand !== 'list' && entries.length === 0) throw new UsageError(`Name the addresses or @domains to ${subcommand}.`);
    return withTarget(values.config, remoteOf(values), ({ allowlist }) =>
      runAllowlistCommand(
        allowlist,
        { action: subcommand, projectId, entries },
        { write: (line) => console.log(line), error: (line) => console.error(`mailwarden: ${line}`) },
      ),
    );
  }
  throw new UsageError(`Unknown command "${positionals.join(' ')}".`);
}

/**
 * An import run's name: its start in ISO 8601's basic format and 6 random hex (`20261127T091500Z-1a2b3c`),
 * without `:`, which separates an actor's segments (`actor=import:<run>` finds the run's changes).
 */
function importRun(): string {
  const start = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  return `${start}-${randomBytes(3).toString('hex')}`;
}

/** The running service `--url` names, with its key (`--api-key` or MAILWARDEN_API_KEY); undefined without `--url`. */
function remoteOf(values: { url?: string | undefined; 'api-key'?: string | undefined }): { url: string; apiKey: string } | undefined {
  const apiKey = values['api-key'] ?? process.env.MAILWARDEN_API_KEY;
  if (values.url === undefined && values['api-key'] !== undefined) throw new UsageError('--api-key goes with --url.');
  if (values.url !== undefined && (apiKey === undefined || apiKey === '')) {
    throw new UsageError('--url needs an API key of the project: --api-key <key> or MAILWARDEN_API_KEY.');
  }
  return values.url === undefined ? undefined : { url: values.url, apiKey: apiKey! };
}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        demo: { type: 'boolean', default: false },
        scopes: { type: 'string' },
        name: { type: 'string' },
        admin: { type: 'boolean', default: false },
        project: { type: 'string' },
        format: { type: 'string' },
        output: { type: 'string' },
        rejects: { type: 'string' },
        restart: { type: 'boolean', default: false },
        url: { type: 'string' },
        'api-key': { type: 'string' },
        'manual-as': { type: 'string' },
        type: { type: 'string' },
        to: { type: 'string', multiple: true },
        'tracking-id': { type: 'string' },
        stream: { type: 'string' },
        'group-stream': { type: 'string', multiple: true },
        count: { type: 'string' },
        'private-key': { type: 'string' },
        secret: { type: 'string' },
        'topic-arn': { type: 'string' },
        'unsubscribe-group': { type: 'string' },
        topic: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    // parseArgs says what is wrong (an unknown option, a missing value); the rest is the usage.
    throw new UsageError((error as Error).message);
  }
}

/**
 * `projects.<id>.webhooks.sendgrid.unsubscribeGroups` of the configuration, when one is given (`--config`
 * or `MAILWARDEN_CONFIG`): the streams the service puts each group's unsubscribe events in.
 */
function configuredGroups(configFile: string | undefined, projectId: string): Record<string, string> | undefined {
  if (configFile === undefined && process.env.MAILWARDEN_CONFIG === undefined) return undefined;
  const groups = loadConfig({ file: configFile }).projects[projectId]?.webhooks?.sendgrid?.unsubscribeGroups;
  return groups === undefined ? undefined : { ...groups };
}

const STREAM_NAMES = '1 to 64 of a-z, 0-9, _ and -, not starting with _ or -';

/**
 * `--group-stream 123=marketing`, repeatable: the stream of each provider group (a SendGrid unsubscribe
 * group ID, a Mailgun tag). Undefined when none is given.
 */
function parseGroupStreams(pairs: readonly string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  const map: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.lastIndexOf('=');
    const group = pair.slice(0, at).trim();
    const stream = pair.slice(at + 1);
    if (at <= 0 || group === '') throw new UsageError(`--group-stream ${JSON.stringify(pair)} is not <group>=<stream>.`);
    if (!isStreamName(stream))
      throw new UsageError(`--group-stream ${JSON.stringify(pair)}: ${JSON.stringify(stream)} is not a stream name: ${STREAM_NAMES}.`);
    if (Object.hasOwn(map, group) && map[group] !== stream) throw new UsageError(`--group-stream maps ${group} twice.`);
    map[group] = stream;
  }
  return map;
}

/** The package's version, read from its package.json (one level up from src/ and from dist/). */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

async function serve(configured: ServerConfig, demo: boolean, configFile: string | undefined): Promise<number> {
  // Loaded here, not at the top: an import or export needs no web server (8 MB of the CLI's memory).
  const [{ retentionMs, startService }, { demoBanner, seedDemo, withDemoProject }, { createDemoLog }, { watchConfig }] = await Promise.all([
    import('./service.js'),
    import('./demo.js'),
    import('./demo-log.js'),
    import('./reload.js'),
  ]);
  const { config, apiKey } = demo ? withDemoProject(configured) : { config: configured, apiKey: undefined };
  // The demo is read by a person: short log lines, none before the banner. A service logs JSON.
  const demoLog = demo ? createDemoLog() : undefined;
  const opened = await openStore(process.env, { retentionMs: retentionMs(config), changes: changeFeedOf(config) });
  const service = await startService(config, opened, demoLog === undefined ? {} : { logStream: demoLog }).catch(async (error: unknown) => {
    await opened.close();
    throw error;
  });
  if (apiKey !== undefined) {
    await seedDemo(service.mailwarden);
    // Under `npm start` (the repository), the CLI runs from source through the root `mailwarden` script.
    const cli = process.env.npm_lifecycle_event === 'start' ? 'npm run mailwarden --' : 'npx mailwarden';
    demoLog!.printBanner(demoBanner(service.url, apiKey, opened.kind, config.dashboard, cli));
  }
  // The demo's key and secrets are made at start: it is not reloaded (docs/server.md, "Reloading the configuration").
  const stopWatching = demo
    ? () => {}
    : watchConfig(configFile ?? process.env.MAILWARDEN_CONFIG, (cause) => {
        let next: ServerConfig;
        try {
          next = loadConfig({ file: configFile });
        } catch (error) {
          service.app.log.error(
            { cause, problems: (error as Error).message },
            'configuration not reloaded: it is not valid; the old one is kept',
          );
          return;
        }
        service.reload(next).catch((error: unknown) => service.app.log.error({ err: error, cause }, 'configuration reload failed'));
      });
  if (!demo)
    service.app.log.info(
      { file: configFile ?? process.env.MAILWARDEN_CONFIG },
      'reloading on SIGHUP and when the configuration file changes',
    );
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      stopWatching();
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

/**
 * Runs an import, an export or an allowlist command against a running service (`--url`), or against the
 * store of the environment with the `hashKey` of the configuration. The name says which, for the checkpoint.
 */
async function withTarget(
  configFile: string | undefined,
  remote: { url: string; apiKey: string } | undefined,
  run: (target: { suppressions: SuppressionTarget; allowlist: AllowlistTarget }, targetName: string) => Promise<number>,
): Promise<number> {
  if (remote !== undefined) return run({ ...remoteSuppressions(remote), ...remoteAllowlist(remote) }, remote.url.replace(/\/+$/, ''));
  const config = loadConfig({ file: configFile });
  const opened = await openStore(process.env);
  if (opened.kind === 'memory') {
    console.error(
      'mailwarden: warning: no REDIS_URL or DATABASE_URL, so this runs on a memory store that is gone when the command ends (--url reaches a running service).',
    );
  }
  // The projects' rules too: an imported row without `expires_at` expires as the service would expire it.
  const rules = suppressionRulesOf(config);
  const mailwarden = createMailwarden({
    store: opened.store,
    ...(config.hashKey === undefined ? {} : { hashKey: config.hashKey }),
    ...(rules === undefined ? {} : { rules }),
  });
  try {
    return await run(mailwarden, opened.kind);
  } finally {
    await opened.close();
  }
}

/** Errors the user can act on are one line; anything else is a bug, and its stack helps. */
function isExpected(error: unknown): error is Error {
  if (isMailwardenError(error) || error instanceof ImportFileError || error instanceof RemoteServiceError) return true;
  if (!(error instanceof Error)) return false;
  // The interrupt's own reason, and system errors such as ENOENT or EACCES on the file.
  return error.message.startsWith('Interrupted') || typeof (error as { code?: unknown }).code === 'string';
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`mailwarden: ${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(isExpected(error) ? `mailwarden: ${error.message}` : error);
    process.exit(1);
  },
);
