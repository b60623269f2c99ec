export { loadConfig, configSchema, apiKeyScopes, webhookAuth, type ServerConfig, type ServerConfigInput } from './config.js';
export { openStore, storeKind, type OpenedStore, type StoreKind, type StoreEnvironment } from './store.js';
export { startService, type Service } from './service.js';
export { importSuppressions, type ImportOptions, type ImportSummary } from './suppressions-file/import.js';
export { exportSuppressions } from './suppressions-file/export.js';
export { seedDemo, withDemoProject, demoBanner, DEMO_PROJECT, demoWebhookAuth } from './demo.js';
export { sendTestWebhooks, type SendTestWebhooksOptions } from './webhooks-send.js';
