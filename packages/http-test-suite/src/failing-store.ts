import type { Store } from '@mailwarden/core';

/** A store whose every operation can be made to fail, as an unreachable or broken server would. */
export interface FailingStore extends Store {
  /** From now on every operation but `close` throws what `failure()` returns; `undefined` heals the store. */
  failWith(failure: (() => Error) | undefined): void;
}

/** Wraps `store`: it answers normally until `failWith` is called. */
export function createFailingStore(store: Store): FailingStore {
  let failure: (() => Error) | undefined;
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    if (typeof value !== 'function' || name === 'close') {
      wrapped[name] = value;
      continue;
    }
    const operation = value as (...args: unknown[]) => Promise<unknown>;
    wrapped[name] = async (...args: unknown[]) => {
      if (failure !== undefined) throw failure();
      return operation.apply(store, args);
    };
  }
  return {
    ...(wrapped as unknown as Store),
    close: () => store.close(),
    failWith: (next) => void (failure = next),
  };
}
