import fs from 'node:fs';
import path from 'node:path';
import { judgeflowHome } from '../core/io/home';
import type { ResultsStore } from '../core/model/store';
import { InputError } from '../core/model/inputError';
import { olderSqliteSchema, SqliteStore } from './sqlite';

/** Loaded only when a PostgreSQL store is used, so SQLite users and short commands never load the driver. */
const postgres = () => require('./postgres') as typeof import('./postgres');

/**
 * Which results store to use, from JUDGEFLOW_STORE: a file path or `sqlite:PATH` (SQLite), `postgres://…` or
 * `postgresql://…` (PostgreSQL, shared by workers on many machines), else <JUDGEFLOW_HOME or ./.judgeflow>/results.db.
 * A new implementation is one more case in `parseStoreSpec` and `openNew`.
 */
export type StoreTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

export function storeTarget(env: NodeJS.ProcessEnv = process.env): StoreTarget {
  const spec = env.JUDGEFLOW_STORE?.trim();
  return spec ? parseStoreSpec(spec) : { kind: 'sqlite', file: path.join(judgeflowHome(env), 'results.db') };
}

/** `where` names the setting in messages (JUDGEFLOW_STORE, or a command's option). */
export function parseStoreSpec(spec: string, where = 'JUDGEFLOW_STORE'): StoreTarget {
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(spec)?.[1]?.toLowerCase(); // two letters at least: C:\ is a path
  if (!scheme) return { kind: 'sqlite', file: path.resolve(spec) };
  switch (scheme) {
    case 'sqlite': {
      const file = spec.slice(scheme.length + 1).replace(/^\/\/(?=\/)/, ''); // sqlite:///abs/path as well as sqlite:path
      if (!file) throw new InputError(`${where}="sqlite:" names no file; use sqlite:PATH or a file path`);
      return { kind: 'sqlite', file: path.resolve(file) };
    }
    case 'postgres':
    case 'postgresql': {
      let url: URL;
      try {
        url = new URL(spec);
      } catch {
        throw new InputError(
          `${where}="${withoutCredentials(spec)}" is not a valid URL; use postgres://USER@HOST:PORT/DATABASE (the password in PGPASSWORD or ~/.pgpass, or in the URL)`,
        );
      }
      if (!url.hostname && !url.searchParams.get('host'))
        throw new InputError(
          `${where}="${withoutCredentials(spec)}" names no host; use postgres://USER@HOST:PORT/DATABASE`,
        );
      return { kind: 'postgres', url: spec };
    }
    default:
      throw new InputError(
        `${where}="${withoutCredentials(spec)}": unknown results store scheme "${scheme}:"; use a file path, sqlite:PATH or postgres://USER@HOST/DATABASE`,
      );
  }
}

/** For messages: where the store is, never with a password. */
export function storeLocation(target: StoreTarget = storeTarget()): string {
  if (target.kind === 'sqlite') return target.file;
  const url = new URL(target.url);
  url.password = '';
  url.searchParams.delete('password');
  return url.toString();
}

function withoutCredentials(spec: string): string {
  return spec.replace(/\/\/[^/@]*@/, '//***@');
}

const key = (t: StoreTarget) => (t.kind === 'sqlite' ? `sqlite:${t.file}` : t.url);
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

const announced = new Set<string>();

/**
 * Close the shared stores (openStore's) of this process, for its owner once nothing uses them any more. A process
 * that ends closes an open SQLite store itself, checkpointing its write-ahead log into the file as it exits: tens of
 * them take that exit about half a second (a jest worker runs many test files, each with its own stores, and jest
 * force-exits a worker that takes over 0.5 s: "A worker process has failed to exit gracefully"). The test environment
 * (test/support/quietEnvironment.js) calls it after each test file through the global symbol, without loading this
 * module in a file that never did.
 */
export async function closeStores(): Promise<void> {
  const stores = [...opened.values()];
  opened.clear();
  // One its user closed already (a PostgreSQL pool ends once) is no error here.
  await Promise.allSettled(stores.map((store) => store.close()));
}
(globalThis as Record<symbol, unknown>)[Symbol.for('judgeflow.closeStores')] = closeStores;

/**
 * The shared store, brought to the current schema: what `run` and `worker` use (read-only commands never migrate, see
 * openExistingStore). A store that existed before is said to be migrated, one line per migration applied (once per
 * process); a new one is simply created.
 */
export async function openStoreMigrating(
  say: (line: string) => void,
  target: StoreTarget = storeTarget(),
): Promise<ResultsStore> {
  const existed = opened.has(key(target)) || (await storeExists(target));
  const store = await openStore(target);
  const report = await store.migrate();
  if (existed && !announced.has(key(target)))
    for (const m of report.applied) say(migratedLine(storeLocation(target), m));
  announced.add(key(target));
  return store;
}

export const migratedLine = (location: string, m: { version: number; name: string }) =>
  `Results store ${location}: applied migration ${m.version} (${m.name})`;

/** A store of its own (tests, scripts): the caller closes it. */
export function openNew(target: StoreTarget): ResultsStore {
  switch (target.kind) {
    case 'sqlite':
      return new SqliteStore(target.file);
    case 'postgres':
      return new (postgres().PostgresStore)(target.url, storeLocation(target));
  }
}

/**
 * The store only if it already exists, so read-only commands (and typos) leave no empty store behind; and never
 * migrated: a store older than this judgeflow is an input error saying to run `judgeflow store migrate`
 * (stores/migrations.ts, olderStoreProblem). Once the store is current, the shared instance is the one openStore gives.
 */
export async function openExistingStore(env: NodeJS.ProcessEnv = process.env): Promise<ResultsStore | null> {
  const target = storeTarget(env);
  if (!opened.has(key(target))) {
    if (!(await storeExists(target))) return null;
    const older = await olderSchema(target);
    if (older) throw new InputError(older);
  }
  return openStore(target);
}

/** Why the store's schema is too old to read without migrating it; null when it is current. */
async function olderSchema(target: StoreTarget): Promise<string | null> {
  if (target.kind === 'sqlite') return olderSqliteSchema(target.file);
  const probe = new (postgres().PostgresStore)(target.url, storeLocation(target));
  try {
    return await probe.olderSchema();
  } finally {
    await probe.close();
  }
}

/** A SQLite file that exists; a PostgreSQL database that holds judgeflow's schema (asked without creating anything). */
export async function storeExists(target: StoreTarget): Promise<boolean> {
  if (target.kind === 'sqlite') return fs.existsSync(target.file);
  const probe = new (postgres().PostgresStore)(target.url, storeLocation(target));
  try {
    return await probe.exists();
  } finally {
    await probe.close();
  }
}
