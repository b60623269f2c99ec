// `@mailwarden/core/testing`: what an application's own tests use to prove its webhook integration.
export {};
