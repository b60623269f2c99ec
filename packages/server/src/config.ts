import { readFileSync } from 'node:fs';
import {
  type AlertRules,
  checkAlertRules,
  checkOutboundOptions,
  checkSuppressionRules,
  MIN_UNSUBSCRIBE_SECRET_LENGTH,
  MailwardenError,
  type MailwardenOptions,
  type ProviderAuth,
  type SuppressionRules,
  type UnsubscribeLinksOptions,
} from '@mailwarden/core';
import { apiScopes, isApiKeyHash, isApiKeyName, isStreamName } from '@mailwarden/core';
import type { ChangeFeedOptions } from '@mailwarden/core/store';
import { z } from 'zod';
import { type ConfiguredKeyItem, keyGrants, keyProblems, type KeyGrant, syncedKeys } from './keys.js';

// The service's configuration: a JSON file (`--config` or MAILWARDEN_CONFIG) and environment variables,
// validated once at start so a typo fails the start with a clear message, never a later request.

const secrets = z.array(z.string().min(1)).min(1);
const sharedSecret = z
  .object({
    basic: z.array(z.object({ username: z.string(), password: z.string().min(1) })).optional(),
    bearer: secrets.optional(),
    headers: z.array(z.object({ name: z.string().min(1), value: z.string().min(1) })).optional(),
  })
  .strict();

/**
 * An API key (docs/server.md, "API keys"): a string (the key in clear, every scope), or an object with a
 * name, the key's `hash` (`mailwarden keys new` prints it) or the `key` itself, and its scopes (absent: all four).
 */
const apiKeyItem = z.union([
  z.string().min(1),
  z
    .object({
      name: z.string().refine(isApiKeyName, 'a key name: 1-64 letters, digits, ".", "_" or "-"'),
      hash: z.string().refine(isApiKeyHash, '"sha256:" and 64 lower-case hex digits, as `mailwarden keys new` prints it').optional(),
      key: z.string().min(1).optional(),
      scopes: z.array(z.enum(apiScopes)).min(1).optional(),
    })
    .strict()
    .refine((item) => (item.hash === undefined) !== (item.key === undefined), "give the key's hash or the key, one of them"),
]);
const apiKeyList = z.array(apiKeyItem).min(1);

const streamName = z
  .string()
  .refine(isStreamName, 'a stream name: 1-64 lower-case letters, digits, "-" and "_", starting with a letter or digit');

/** A Resend (Svix) signing secret: `whsec_` and base64 of the key. */
const resendSecret = z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'a Resend signing secret, whsec_…');

const providerAuth = z
  .object({
    ses: z
      .object({
        topicArns: z.array(z.string().startsWith('arn:')).min(1),
        basic: sharedSecret.shape.basic,
        signatureRequired: z.boolean().optional(),
      })
      .strict()
      .optional(),
    sendgrid: z
      .object({
        publicKey: z.string().min(1),
        toleranceSeconds: z.number().positive().optional(),
        oauthTokens: secrets.optional(),
        /** SendGrid unsubscribe groups (`asm_group_id`) by the stream each stands for (docs/providers/sendgrid.md#unsubscribes). */
        unsubscribeGroups: z.record(z.string().regex(/^[0-9]+$/, 'an unsubscribe group id (asm_group_id)'), streamName).optional(),
      })
      .strict()
      .optional(),
    mailgun: z
      .object({ signingKey: z.string().min(1), toleranceSeconds: z.number().positive().optional() })
      .strict()
      .optional(),
    sparkpost: sharedSecret.optional(),
    postmark: sharedSecret.optional(),
    /** Brevo's webhook credentials: Basic in the URL, a bearer token or a custom header (docs/providers/brevo.md). */
    brevo: sharedSecret.optional(),
    /** Mailjet's basic credentials of the webhook URL, the one authentication it offers (docs/providers/mailjet.md). */
    mailjet: z
      .object({ basic: z.array(z.object({ username: z.string(), password: z.string().min(1) })).min(1) })
      .strict()
      .optional(),
    mandrill: z
      .object({ webhookKey: z.string().min(1), url: z.url(), allowTestKey: z.boolean().optional() })
      .strict()
      .optional(),
    /** Resend's signing secret (`whsec_…`), or several while rotating (docs/providers/resend.md). */
    resend: z
      .object({
        signingSecret: z.union([resendSecret, z.array(resendSecret).min(1)]),
      })
      .strict()
      .optional(),
    /** MailerSend's webhook signing secret, or several while rotating (docs/providers/mailersend.md). */
    mailersend: z
      .object({ signingSecret: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]) })
      .strict()
      .optional(),
    /** The Postal server's RSA public key: a PEM, or the base64 key Postal shows (docs/providers/postal.md). */
    postal: z
      .object({ publicKey: z.string().trim().min(1) })
      .strict()
      .optional(),
    /** SES events through EventBridge: the API destination connection's Basic, API-key header or OAuth bearer (docs/providers/ses-eventbridge.md). */
    'ses-eventbridge': sharedSecret.optional(),
  })
  .strict() satisfies z.ZodType<ProviderAuth>;

const expiryDays = z.number().nullable().optional();

/**
 * A project's suppression rules (docs/server.md, "Suppression rules"): their shape here, their values
 * by `checkSuppressionRules`, the one place that knows the ranges, each problem named by its field.
 */
const suppressionRules = z
  .object({
    softBounces: z.object({ bounces: z.number(), days: z.number(), resetOnDelivery: z.boolean().optional() }).strict().optional(),
    expireAfterDays: z
      .object({ softBounces: expiryDays, hardBounce: expiryDays, complaint: expiryDays, manual: expiryDays, unsubscribe: expiryDays })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((rules, context) => {
    try {
      checkSuppressionRules(rules as SuppressionRules, 'rules');
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      // `rules.softBounces.days must be …`: the field becomes the issue's path, the rest its message.
      const [field = '', ...problem] = error.message.split(' ');
      context.addIssue({ code: 'custom', path: field.split('.').slice(1), message: problem.join(' ') });
    }
  });

/**
 * A project's deliverability alerts (docs/server.md, "Deliverability alerts"): their shape here, their
 * values by core's `checkAlertRules`, as `rules` are checked by `checkSuppressionRules`.
 */
const alertRules = z
  .object({
    window: z.number().optional(),
    minMessages: z.number().optional(),
    bounceRate: z.number().optional(),
    complaintRate: z.number().optional(),
    resolveRatio: z.number().optional(),
    trackingIds: z.boolean().optional(),
    pauseStreams: z.array(z.string()).optional(),
  })
  .strict()
  .superRefine((rules, context) => {
    try {
      checkAlertRules(rules as AlertRules, 'alerts');
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      const [field = '', ...problem] = error.message.split(' ');
      context.addIssue({ code: 'custom', path: field.split('.').slice(1), message: problem.join(' ') });
    }
  });

/**
 * One outbound webhook endpoint of a project (docs/server.md, "Outbound webhooks"): its shape here, its
 * values by core's `checkOutboundOptions` (below, with the tuning), the one place that knows them.
 */
const outboundEndpoint = z
  .object({ id: z.string(), url: z.string(), secrets: z.array(z.string()), kinds: z.array(z.string()).optional() })
  .strict();

const project = z
  .object({
    /** Keys that open this project's API: strings, or `{ name, hash | key, scopes? }` (docs/server.md, "API keys"). */
    apiKeys: apiKeyList.optional(),
    /** The project's webhook authentication, per provider (docs/providers/README.md). */
    webhooks: providerAuth.optional(),
    /**
     * Where a provider's unsubscribe of a message sent without a stream is recorded; without it, on the
     * project-wide list (docs/decisions.md, "Who suppresses on an unsubscribe").
     */
    defaultStream: streamName.optional(),
    /** Suppress after repeated soft bounces, and let suppressions expire: `{ "softBounces": { "bounces": 3, "days": 7 } }`. */
    rules: suppressionRules.optional(),
    /** Bounce and complaint rates over the last messages, with crossings in the change feed: `{}` for SES's review levels. */
    alerts: alertRules.optional(),
    /** Where the project's changes are POSTed, signed (Standard Webhooks), retried and paused when failing too long. */
    outboundWebhooks: z.array(outboundEndpoint).optional(),
  })
  .strict();

const projectId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'project ids are 1-64 letters, digits, ".", "_" or "-"');

export const configSchema = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.int().min(0).max(65535).default(3000),
    /** Path under which the API is mounted, e.g. `/mailwarden`; default the root. */
    basePath: z
      .string()
      .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'basePath is empty or like /mailwarden')
      .default(''),
    /**
     * Trust `X-Forwarded-*` headers: `true` for any proxy, or the proxies' addresses / CIDR ranges
     * separated by commas (`"10.0.0.0/8,127.0.0.1"`). Only client addresses in logs depend on it.
     */
    trustProxy: z.union([z.boolean(), z.string().min(1)]).default(false),
    /** HMAC key for address hashes; keep it stable once data exists. */
    hashKey: z.string().min(16).optional(),
    /** Signs pagination cursors. */
    cursorSecret: z.string().min(16).optional(),
    /** Keys that open every project (operators, the dashboard): as a project's `apiKeys`. */
    adminApiKeys: apiKeyList.optional(),
    projects: z.record(projectId, project).default({}),
    /** Messages (and their dedup keys) are kept this many days after their last event; default forever. */
    retentionDays: z.number().positive().optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * Keep the clicked URL and the reader's user agent of opens and clicks in message timelines, for
     * every project. Off by default: they are personal data (docs/decisions.md, "Message timelines").
     */
    timelinePersonalData: z.boolean().default(false),
    /**
     * The service's public base URL, as recipients and providers reach it (`https://mail.example.com`):
     * one-click unsubscribe links start with it, then `basePath` (docs/unsubscribe.md).
     */
    publicUrl: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * Secrets that seal one-click unsubscribe tokens, each at least 32 characters: the first seals, every
     * one opens, so rotate by putting a new one first. With `publicUrl`, links can be made.
     */
    unsubscribeSecrets: z.array(z.string().min(MIN_UNSUBSCRIBE_SECRET_LENGTH)).min(1).optional(),
    /** Serve the dashboard at `{basePath}/dashboard/`; it reads only through the API, with the key a person enters. */
    dashboard: z.boolean().default(true),
    /** A request's headers must all arrive within this; else 408 and the connection is closed. */
    headersTimeoutMs: z.int().min(1).default(10_000),
    /** A connection that sends nothing for this long (a stalled upload, an idle socket) is closed. */
    idleTimeoutMs: z.int().min(1).default(10_000),
    /** A whole request, body included, must arrive within this: room for a 10 MiB webhook at about 300 kbit/s. */
    requestTimeoutMs: z.int().min(1).default(300_000),
    /**
     * Test only: also accept SES webhooks signed with the testing kit's SNS key (`mailwarden webhooks send
     * ses`). Its private key is public, so with this on an SES webhook proves only that its TopicArn is
     * allowlisted. Off by default; `serve --demo` turns it on (docs/decisions.md, "Testing SES webhooks").
     */
    unsafeTrustTestSnsCertificate: z.boolean().default(false),
    /**
     * The change feed's retention (docs/server.md, "The change feed"). The feed is on when this is given,
     * or when a project has `alerts` or `outboundWebhooks`; `false` keeps it off (alerts still fire and
     * pause streams, but their crossings are recorded nowhere).
     */
    changes: z
      .union([z.literal(false), z.object({ maxAgeDays: z.number().positive().optional(), maxLength: z.int().min(1).optional() }).strict()])
      .optional(),
    /**
     * Outbound delivery tuning, for every endpoint (docs/server.md, "Outbound webhooks"); the defaults suit
     * production. `schedule` is the retry delays in milliseconds: after the last one fails, the endpoint is paused.
     */
    outbound: z
      .object({
        pollMs: z.number().optional(),
        leaseMs: z.number().optional(),
        timeoutMs: z.number().optional(),
        maxResponseBytes: z.number().optional(),
        schedule: z.array(z.number()).optional(),
      })
      .strict()
      .default({}),
    /**
     * `GET /metrics` in the Prometheus text format (docs/server.md, "Metrics"): at the origin (not under
     * `basePath`) of the main listener, or only on a listener of its own with `listen`; with `token`, only
     * for `Authorization: Bearer <token>`.
     */
    metrics: z
      .object({
        enabled: z.boolean().default(true),
        token: z.string().min(1).optional(),
        listen: z
          .object({ host: z.string().optional(), port: z.int().min(0).max(65535) })
          .strict()
          .optional(),
      })
      .strict()
      .default({ enabled: true }),
    /**
     * Requests per fixed window per client address, key, unsubscribe and webhook address (docs/server.md,
     * "Rate limits"), counted in the store so every instance shares them. On with the defaults; `false` turns them off.
     */
    rateLimits: z
      .union([
        z.literal(false),
        z
          .object({
            windowSeconds: z.int().min(1).optional(),
            perClient: z.int().min(0).optional(),
            perKey: z.int().min(0).optional(),
            unsubscribe: z.int().min(0).optional(),
            webhooks: z.int().min(0).optional(),
          })
          .strict(),
      ])
      .default({}),
  })
  .strict()
  .refine((config) => config.unsubscribeSecrets === undefined || config.publicUrl !== undefined, {
    message: 'unsubscribeSecrets needs publicUrl: unsubscribe links start with it',
    path: ['publicUrl'],
  })
  .superRefine((config, context) => {
    const outbound = outboundOf(config);
    if (outbound === undefined) return;
    try {
      checkOutboundOptions(outbound);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      const { path, message } = outboundIssue(error.message);
      context.addIssue({ code: 'custom', path, message });
    }
  })
  .superRefine((config, context) => {
    for (const problem of keyProblems(projectKeyItems(config), config.adminApiKeys ?? [])) context.addIssue({ code: 'custom', ...problem });
  })
  .refine(
    (config) => config.changes !== false || Object.values(config.projects).every((project) => project.outboundWebhooks === undefined),
    {
      message: 'outbound webhooks deliver the change feed: remove "changes": false, or the projects\' outboundWebhooks',
      path: ['changes'],
    },
  );

/**
 * Core's message about the outbound options (`outbound.endpoints["acme"][0].url must be …`) as an issue
 * at the configuration's own path (`projects.acme.outboundWebhooks.0.url`).
 */
function outboundIssue(message: string): { path: (string | number)[]; message: string } {
  const endpoint = /^outbound\.endpoints\[("(?:[^"\\]|\\.)*")\]\[(\d+)\](?:\.(\w+)(?:\[(\d+)\])?)?:? (.*)$/s.exec(message);
  if (endpoint !== null) {
    const [, project, index, field, item, problem] = endpoint;
    const path: (string | number)[] = ['projects', JSON.parse(project!) as string, 'outboundWebhooks', Number(index)];
    if (field !== undefined) path.push(field);
    if (item !== undefined) path.push(Number(item));
    return { path, message: problem! };
  }
  const [, field, problem] = /^outbound\.(\w+):? (.*)$/s.exec(message) ?? [undefined, undefined, message];
  return { path: field === undefined ? ['outbound'] : ['outbound', field], message: problem! };
}

export type ServerConfig = z.output<typeof configSchema>;
export type ServerConfigInput = z.input<typeof configSchema>;

/** Environment variables the service reads, beside the store's (REDIS_URL, DATABASE_URL). */
const ENVIRONMENT = {
  HOST: 'host',
  PORT: 'port',
  MAILWARDEN_BASE_PATH: 'basePath',
  MAILWARDEN_HASH_KEY: 'hashKey',
  MAILWARDEN_CURSOR_SECRET: 'cursorSecret',
  MAILWARDEN_RETENTION_DAYS: 'retentionDays',
  MAILWARDEN_LOG_LEVEL: 'logLevel',
  MAILWARDEN_TRUST_PROXY: 'trustProxy',
  MAILWARDEN_DASHBOARD: 'dashboard',
  MAILWARDEN_TIMELINE_PERSONAL_DATA: 'timelinePersonalData',
  MAILWARDEN_HEADERS_TIMEOUT_MS: 'headersTimeoutMs',
  MAILWARDEN_IDLE_TIMEOUT_MS: 'idleTimeoutMs',
  MAILWARDEN_REQUEST_TIMEOUT_MS: 'requestTimeoutMs',
  MAILWARDEN_UNSAFE_TRUST_TEST_SNS_CERTIFICATE: 'unsafeTrustTestSnsCertificate',
  MAILWARDEN_PUBLIC_URL: 'publicUrl',
  MAILWARDEN_UNSUBSCRIBE_SECRETS: 'unsubscribeSecrets',
} as const;

/**
 * The configuration: the JSON file if given, then environment variables over it. `MAILWARDEN_API_KEYS`
 * adds keys as `project:key` pairs separated by commas (`*:key` for an admin key).
 */
export function loadConfig(options: { file?: string | undefined; env?: NodeJS.ProcessEnv } = {}): ServerConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? env.MAILWARDEN_CONFIG;
  const input: Record<string, unknown> = file === undefined || file === '' ? {} : readConfigFile(file, env);
  for (const [variable, key] of Object.entries(ENVIRONMENT)) {
    const value = env[variable];
    if (value === undefined || value === '') continue;
    input[key] =
      key === 'port' || key === 'retentionDays' || key.endsWith('TimeoutMs')
        ? Number(value)
        : (key === 'trustProxy' || key === 'dashboard' || key === 'unsafeTrustTestSnsCertificate' || key === 'timelinePersonalData') &&
            (value === 'true' || value === 'false')
          ? value === 'true'
          : key === 'unsubscribeSecrets'
            ? value.split(',').map((secret) => secret.trim())
            : value;
  }
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .flatMap(branchIssues)
      .map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('\n');
    throw new MailwardenError('invalid_request', `Invalid configuration${file === undefined ? '' : ` in ${file}`}:\n${problems}`);
  }
  const config = addEnvironmentKeys(parsed.data, env.MAILWARDEN_API_KEYS);
  // MAILWARDEN_API_KEYS may name a key the file names otherwise: checked again with them.
  const keyIssues = keyProblems(projectKeyItems(config), config.adminApiKeys ?? []);
  if (keyIssues.length > 0) {
    const problems = keyIssues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`).join('\n');
    throw new MailwardenError('invalid_request', `Invalid configuration${file === undefined ? '' : ` in ${file}`}:\n${problems}`);
  }
  return config;
}

/**
 * A union's problems as those of the one branch of the value's type (a key item that is an object: the
 * object's), instead of zod's "Invalid input"; else the union's own.
 */
function branchIssues(issue: z.core.$ZodIssue): { path: PropertyKey[]; message: string }[] {
  if (issue.code !== 'invalid_union') return [issue];
  const typed = issue.errors.filter((branch) => !branch.every((inner) => inner.code === 'invalid_type' && inner.path.length === 0));
  if (typed.length !== 1) return [issue];
  return typed[0]!.flatMap((inner) => branchIssues({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue));
}

function readConfigFile(file: string, env: NodeJS.ProcessEnv): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new MailwardenError('invalid_request', `Cannot read the configuration file ${file}: ${(error as Error).message}`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return substituteVariables(value, env) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof MailwardenError) throw error;
    // Not JSON: reported below.
  }
  throw new MailwardenError('invalid_request', `The configuration file ${file} is not a JSON object.`);
}

/**
 * Replaces `${NAME}` in every string of the file with the environment variable NAME, so secrets (API
 * keys, signing keys) can stay in the environment while the file holds the structure.
 */
function substituteVariables(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
      const replacement = env[name];
      if (replacement === undefined) {
        throw new MailwardenError(
          'invalid_request',
          `The configuration file uses \${${name}}, but the environment variable ${name} is not set.`,
        );
      }
      return replacement;
    });
  }
  if (Array.isArray(value)) return value.map((item) => substituteVariables(item, env));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substituteVariables(item, env)]));
  }
  return value;
}

function addEnvironmentKeys(config: ServerConfig, pairs: string | undefined): ServerConfig {
  if (pairs === undefined || pairs.trim() === '') return config;
  const projects = { ...config.projects };
  const adminApiKeys = [...(config.adminApiKeys ?? [])];
  for (const pair of pairs.split(',')) {
    const separator = pair.indexOf(':');
    const id = pair.slice(0, separator).trim();
    const key = pair.slice(separator + 1).trim();
    if (separator <= 0 || key === '' || (id !== '*' && !projectId.safeParse(id).success)) {
      throw new MailwardenError(
        'invalid_request',
        'MAILWARDEN_API_KEYS takes project:key pairs separated by commas, e.g. acme:k1,*:admin.',
      );
    }
    if (id === '*') adminApiKeys.push(key);
    else projects[id] = { ...projects[id], apiKeys: [...(projects[id]?.apiKeys ?? []), key] };
  }
  return { ...config, projects, ...(adminApiKeys.length === 0 ? {} : { adminApiKeys }) };
}

/** Each project's configured key items (`apiKeys`), admin keys aside. */
export function projectKeyItems(config: Pick<ServerConfig, 'projects'>): Record<string, ConfiguredKeyItem[]> {
  return Object.fromEntries(Object.entries(config.projects).map(([id, { apiKeys = [] }]) => [id, apiKeys]));
}

/**
 * The keys the handler's resolver looks up: each key's grant (name, projects, scopes) by the hex SHA-256
 * of the key. Built anew on each reload and swapped whole (docs/server.md, "Reloading the configuration").
 */
export function apiKeyGrants(config: ServerConfig): Map<string, KeyGrant> {
  return keyGrants(projectKeyItems(config), config.adminApiKeys ?? []);
}

/** The keys of a project as `Store.syncApiKeys` takes them: its own and the admin keys. */
export function projectApiKeys(config: ServerConfig, projectId: string) {
  return syncedKeys(config.projects[projectId]?.apiKeys ?? [], config.adminApiKeys ?? []);
}

/**
 * The keys given in clear (strings and `key` items) as the handler's old map takes them: each key to the
 * projects it opens, `'*'` for admin keys. Keys given by their hash are not in it (`apiKeyGrants` has them).
 */
export function apiKeyScopes(config: ServerConfig): Record<string, string[] | '*'> {
  const clear = (item: ConfiguredKeyItem) => (typeof item === 'string' ? item : item.key);
  const scopes = new Map<string, string[] | '*'>();
  for (const [id, items] of Object.entries(projectKeyItems(config))) {
    for (const key of items.map(clear)) {
      if (key === undefined) continue;
      const scope = scopes.get(key);
      if (scope !== '*') scopes.set(key, [...(scope ?? []), id]);
    }
  }
  for (const key of (config.adminApiKeys ?? []).map(clear)) if (key !== undefined) scopes.set(key, '*');
  return Object.fromEntries(scopes);
}

/** Each project's default stream, as `createMailwarden({ defaultStream })` takes it: only the projects that have one. */
export function defaultStreams(config: ServerConfig): Record<string, string> {
  return Object.fromEntries(
    Object.entries(config.projects).flatMap(([id, { defaultStream }]) => (defaultStream === undefined ? [] : [[id, defaultStream]])),
  );
}

/**
 * Each project's suppression rules, as `createMailwarden({ rules })` takes them: a lookup by project, or
 * `undefined` when no project has any, so the service runs exactly as it did without rules.
 */
export function suppressionRulesOf(config: ServerConfig): ((projectId: string) => SuppressionRules | undefined) | undefined {
  const rules = new Map(
    Object.entries(config.projects).flatMap(([id, project]) =>
      project.rules === undefined ? [] : [[id, project.rules as SuppressionRules]],
    ),
  );
  return rules.size === 0 ? undefined : (projectId) => rules.get(projectId);
}

/** Each project's webhook authentication, as `createMailwarden({ webhooks: { auth } })` takes it. */
export function webhookAuth(config: ServerConfig): Record<string, ProviderAuth> {
  return Object.fromEntries(Object.entries(config.projects).map(([id, { webhooks = {} }]) => [id, webhooks as ProviderAuth]));
}

/**
 * One-click unsubscribe links as `createMailwarden({ unsubscribeLinks })` takes them, sealed with
 * `unsubscribeSecrets` (none without): at `publicUrl` plus `basePath`; without a `publicUrl` (only the demo
 * has secrets without one: `loadConfig` refuses it), at the address the service listens on.
 */
export function unsubscribeLinksOf(config: ServerConfig, listeningUrl: () => string): UnsubscribeLinksOptions | undefined {
  if (config.unsubscribeSecrets === undefined) return undefined;
  const baseUrl = config.publicUrl === undefined ? listeningUrl : `${config.publicUrl.replace(/\/+$/, '')}${config.basePath}`;
  return { baseUrl, secrets: config.unsubscribeSecrets };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The store's `changes` option: the feed's retention, or `undefined` when the feed is off. On when
 * `changes` is given, or when a project has alerts or outbound webhooks (their crossings and deliveries
 * are the feed's); `changes: false` keeps it off.
 */
export function changeFeedOf(config: ServerConfig): ChangeFeedOptions | undefined {
  if (config.changes === false) return undefined;
  const needed = Object.values(config.projects).some((project) => project.alerts !== undefined || project.outboundWebhooks !== undefined);
  if (config.changes === undefined && !needed) return undefined;
  const { maxAgeDays, maxLength } = config.changes ?? {};
  return {
    ...(maxAgeDays === undefined ? {} : { maxAgeMs: Math.round(maxAgeDays * DAY_MS) }),
    ...(maxLength === undefined ? {} : { maxLength }),
  };
}

/** Each project's alert rules, as `createMailwarden({ alerts })` takes them; `undefined` when no project has any. */
export function alertRulesOf(config: ServerConfig): ((projectId: string) => AlertRules | undefined) | undefined {
  const alerts = new Map(
    Object.entries(config.projects).flatMap(([id, project]) => (project.alerts === undefined ? [] : [[id, project.alerts as AlertRules]])),
  );
  return alerts.size === 0 ? undefined : (projectId) => alerts.get(projectId);
}

/** The outbound webhooks as `createMailwarden({ outbound })` takes them; `undefined` when no project has an endpoint. */
export function outboundOf(config: ServerConfig): NonNullable<MailwardenOptions['outbound']> | undefined {
  const endpoints = Object.fromEntries(
    Object.entries(config.projects).flatMap(([id, project]) =>
      project.outboundWebhooks === undefined || project.outboundWebhooks.length === 0 ? [] : [[id, project.outboundWebhooks]],
    ),
  );
  return Object.keys(endpoints).length === 0 ? undefined : { ...config.outbound, endpoints };
}
