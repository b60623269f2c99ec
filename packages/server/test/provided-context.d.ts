// What scripts/test-services.ts provides (its own declaration is outside this package's program).
declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    databaseUrl: string;
    browserWsEndpoint: string;
  }
}
export {};
