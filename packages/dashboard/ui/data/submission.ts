import { useState } from 'preact/hooks';
import type { ApiError } from '../api.js';
import { asApiError } from './load.js';

export type Outcome<T> = { state: 'idle' } | { state: 'busy' } | { state: 'done'; value: T } | { state: 'failed'; error: ApiError };

/** Runs a submission and keeps its outcome for the form to show; resolves to its value, `undefined` if it failed. */
export function useSubmission<T>(): [Outcome<T>, (run: () => Promise<T>) => Promise<T | undefined>] {
  const [outcome, setOutcome] = useState<Outcome<T>>({ state: 'idle' });
  const submit = async (run: () => Promise<T>) => {
    setOutcome({ state: 'busy' });
    try {
      const value = await run();
      setOutcome({ state: 'done', value });
      return value;
    } catch (error) {
      setOutcome({ state: 'failed', error: asApiError(error) });
      return undefined;
    }
  };
  return [outcome, submit];
}
