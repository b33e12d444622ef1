import type { ResultsStore } from '../core/model/store';
import { InputError } from '../core/model/inputError';
import { openExistingStore, storeLocation, storeTarget } from '../stores';

/** Said whenever a run is not found: runs live in the store they were started with (a directory's SQLite file, or a shared database). */
export function whereRunsLive(location = storeLocation(storeTarget())): string {
  if (/^postgres(ql)?:/.test(location))
    return `runs are kept in the results store they were started with (JUDGEFLOW_STORE); this one is ${location}. Point JUDGEFLOW_STORE at the store the run was started with`;
  return `runs are kept in the results store of the directory they were started from (its ./.judgeflow); this directory's store is ${location}. Run this command there, or point JUDGEFLOW_HOME at that directory's .judgeflow`;
}

/** The store a read-only command reads; never created by asking (a command run in the wrong directory says so instead). */
export async function requireExistingStore(): Promise<ResultsStore> {
  const store = await openExistingStore();
  if (!store) throw new InputError(`there is no results store here yet; ${whereRunsLive()}`);
  return store;
}
