import fs from 'node:fs';
import { defaultStorePath, openStore, type ResultsStore } from '../core/store';

/** Opens the results store only if it exists, so read-only commands (and typos) leave no empty store behind. */
export function existingStore(env: NodeJS.ProcessEnv = process.env): ResultsStore | null {
  const file = defaultStorePath(env);
  return fs.existsSync(file) ? openStore(file) : null;
}

/** Said whenever a run is not found locally: runs live in the store of the directory (JUDGEFLOW_HOME) they were started from. */
export function whereRunsLive(file = defaultStorePath()): string {
  return `runs are kept in the results store of the directory they were started from (its ./.judgeflow); this directory's store is ${file}. Run this command there, or point JUDGEFLOW_HOME at that directory's .judgeflow`;
}
