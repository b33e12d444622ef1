import fs from 'node:fs';
import path from 'node:path';
import { judgeflowHome } from '../core/home';
import type { ResultsStore } from '../core/store';
import { InputError } from '../core/inputError';
import { SqliteStore } from './sqlite';

/**
 * Which results store to use, from JUDGEFLOW_STORE: a file path or `sqlite:PATH` (SQLite), else
 * <JUDGEFLOW_HOME or ./.judgeflow>/results.db. A new implementation is one more case in `parseStoreSpec`.
 */
export type StoreTarget = { kind: 'sqlite'; file: string };

export function storeTarget(env: NodeJS.ProcessEnv = process.env): StoreTarget {
  const spec = env.JUDGEFLOW_STORE?.trim();
  return spec ? parseStoreSpec(spec) : { kind: 'sqlite', file: path.join(judgeflowHome(env), 'results.db') };
}

export function parseStoreSpec(spec: string): StoreTarget {
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(spec)?.[1]?.toLowerCase(); // two letters at least: C:\ is a path
  if (!scheme) return { kind: 'sqlite', file: path.resolve(spec) };
  switch (scheme) {
    case 'sqlite': {
      const file = spec.slice(scheme.length + 1).replace(/^\/\/(?=\/)/, ''); // sqlite:///abs/path as well as sqlite:path
      if (!file) throw new InputError('JUDGEFLOW_STORE="sqlite:" names no file; use sqlite:PATH or a file path');
      return { kind: 'sqlite', file: path.resolve(file) };
    }
    default:
      throw new InputError(`JUDGEFLOW_STORE="${withoutCredentials(spec)}": unknown results store scheme "${scheme}:"; use a file path or sqlite:PATH`);
  }
}

/** For messages: where the store is, never with a password. */
export function storeLocation(target: StoreTarget = storeTarget()): string {
  return target.file;
}

function withoutCredentials(spec: string): string {
  return spec.replace(/\/\/[^/@]*@/, '//***@');
}

const key = (t: StoreTarget) => `${t.kind}:${t.file}`;
const opened = new Map<string, ResultsStore>();

/** One shared store per target per process (never close it: workers and commands keep it for their lifetime). */
export async function openStore(target: StoreTarget = storeTarget()): Promise<ResultsStore> {
  let store = opened.get(key(target));
  if (!store) {
    store = openNew(target);
    opened.set(key(target), store);
  }
  return store;
}

/** A store of its own (tests, scripts): the caller closes it. */
export function openNew(target: StoreTarget): ResultsStore {
  switch (target.kind) {
    case 'sqlite':
      return new SqliteStore(target.file);
  }
}

/** The store only if it already exists, so read-only commands (and typos) leave no empty store behind. */
export async function openExistingStore(env: NodeJS.ProcessEnv = process.env): Promise<ResultsStore | null> {
  const target = storeTarget(env);
  return fs.existsSync(target.file) ? openStore(target) : null;
}
