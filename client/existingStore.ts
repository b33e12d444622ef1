import fs from 'node:fs';
import { defaultStorePath, openStore, type ResultsStore } from '../core/store';

/** Opens the results store only if it exists, so read-only commands (and typos) leave no empty store behind. */
export function existingStore(env: NodeJS.ProcessEnv = process.env): ResultsStore | null {
  const file = defaultStorePath(env);
  return fs.existsSync(file) ? openStore(file) : null;
}
