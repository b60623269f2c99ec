// Global setup of the Redis package's project: `luac5.1` for the Lua scripts' syntax check, installed as
// the servers are (`services: ['lua']` in vitest.shared.ts).
import { luac } from '../test-services.ts';

export function setup(): void {
  luac();
}
