import { storeLocation, storeTarget } from '../stores';

/** Said whenever a run is not found: runs live in the store they were started with (a directory's SQLite file, or a shared database). */
export function whereRunsLive(location = storeLocation(storeTarget())): string {
  if (/^postgres(ql)?:/.test(location))
    return `runs are kept in the results store they were started with (JUDGEFLOW_STORE); this one is ${location}. Point JUDGEFLOW_STORE at the store the run was started with`;
  return `runs are kept in the results store of the directory they were started from (its ./.judgeflow); this directory's store is ${location}. Run this command there, or point JUDGEFLOW_HOME at that directory's .judgeflow`;
}
