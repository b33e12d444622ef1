import { storeLocation, storeTarget } from '../stores';

/** Said whenever a run is not found locally: runs live in the store of the directory (JUDGEFLOW_HOME) they were started from. */
export function whereRunsLive(location = storeLocation(storeTarget())): string {
  return `runs are kept in the results store of the directory they were started from (its ./.judgeflow); this directory's store is ${location}. Run this command there, or point JUDGEFLOW_HOME at that directory's .judgeflow`;
}
