// What every package's vitest project shares (keyv-style: a vitest.config.ts in each package, collected
// by the root vitest.config.ts). A project names the servers its tests use; only a run that selects one
// of its files starts them (docs/testing.md, "Test services").
import { fileURLToPath } from 'node:url';
import { defaultServerConditions } from 'vite';
import { configDefaults, defineProject, type UserWorkspaceConfig } from 'vitest/config';

// Workspace packages export a `@mailwarden/source` condition first, so tests run against src/ without a
// build. A name of our own: a consumer's tooling that sets the common `source` condition must not resolve
// to src/, which the published packages do not ship. Without `module`, which Node does not know: the AWS
// SDK's `module` build has extensionless imports that Node cannot load, so dependencies load as in Node.
const conditions = ['@mailwarden/source', ...defaultServerConditions.filter((condition) => condition !== 'module')];

/**
 * A server (or tool) a project's tests use, started by scripts/test-services.ts through the global setup
 * of the same name in scripts/test-services/: `postgres` provides `databaseUrl`, `redis` `redisUrl`,
 * `redis-cluster` `redisClusterNodes`, `chromium` `browserWsEndpoint`; `lua` installs `luac5.1` for the
 * Redis scripts' syntax check.
 */
export type TestService = 'postgres' | 'redis' | 'redis-cluster' | 'chromium' | 'lua';

export interface PackageProjectOptions {
  /** The project's name in vitest's output and for `--project`. */
  name: string;
  /** Test files, relative to the package; by default every `.test.ts` file under `test/`. */
  include?: string[];
  /** Files another project of the package runs. */
  exclude?: string[];
  /** The servers every file of the project may use; none by default. */
  services?: TestService[];
}

/** A package's vitest project: the source condition, the timeout and the global setups of its servers. */
export function packageProject(options: PackageProjectOptions): UserWorkspaceConfig {
  const { name, include = ['test/**/*.test.ts'], exclude = [], services = [] } = options;
  return defineProject({
    resolve: { conditions },
    ssr: { resolve: { conditions } },
    test: {
      name,
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      testTimeout: 60_000,
      globalSetup: services.map((service) => fileURLToPath(new URL(`scripts/test-services/${service}.ts`, import.meta.url))),
    },
  });
}
