export {
  loadConfig,
  configSchema,
  apiKeyScopes,
  webhookAuth,
  unsubscribeLinksOf,
  changeFeedOf,
  alertRulesOf,
  outboundOf,
  type ServerConfig,
  type ServerConfigInput,
} from './config.js';
export { openStore, storeKind } from './store.js';
export type { OpenedStore, StoreKind, StoreEnvironment } from './store-settings.js';
export { startService, type Service } from './service.js';
export { importSuppressions, type ImportOptions, type ImportSummary } from './suppressions-file/import.js';
export { importFormats, type ImportFormat } from './suppressions-file/import-formats.js';
export { exportSuppressions, exportFormats, type ExportFormat, type ExportOptions } from './suppressions-file/export.js';
// Import into, or export from, a running service over its HTTP API (what `--url` does).
export { remoteSuppressions, type RemoteOptions } from './suppressions-file/remote.js';
// The allowlist of a running service over its HTTP API (what `allowlist --url` does).
export { remoteAllowlist, type AllowlistTarget } from './allowlist.js';
export { seedDemo, withDemoProject, demoBanner, DEMO_PROJECT, DEMO_RULES, DEMO_ALERTS, demoWebhookAuth } from './demo.js';
export type { ServiceMetrics } from './metrics.js';
export { sendTestWebhooks, type SendTestWebhooksOptions } from './webhooks-send.js';
