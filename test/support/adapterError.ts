import { AdapterError } from '../../activities/adapters/types';

/**
 * The error a copilot adapter call rejects with. Shared by the http, browser and csv adapter tests, which all
 * check failures the same way: the call must reject (a resolved call yields `undefined`, failing the instanceof check)
 * and with an AdapterError, so its kind and message can then be asserted.
 */
export async function adapterFailure(promise: Promise<unknown>): Promise<AdapterError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AdapterError);
  return error as AdapterError;
}
