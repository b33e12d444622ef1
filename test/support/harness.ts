import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { connectClient, connectWorker } from '../../client/connection';
import { parseRunConfig } from '../../client/config';
import type { ResultsStore } from '../../core/model/store';
import { openNew, type StoreTarget } from '../../stores';
import { createWorker, workerCurrent } from '../../worker/createWorker';
import { installQuietRuntime } from './quietTemporal';

export const REPO = path.resolve(__dirname, '..', '..');
/** Read-only reference data beside the checkout; JUDGEFLOW_TEST_SHARED points elsewhere (a worktree whose parent has none). */
export const SHARED = process.env.JUDGEFLOW_TEST_SHARED
  ? path.resolve(process.env.JUDGEFLOW_TEST_SHARED)
  : path.resolve(REPO, '..', 'shared');

export function tempDir(prefix = 'jf-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function uniqueQueue(name: string): string {
  return `test-${name}-${crypto.randomBytes(4).toString('hex')}`;
}

export interface TestWorld {
  client: Client;
  taskQueue: string;
  store: ResultsStore;
  storeFile: string;
  dir: string;
}

/**
 * Run `fn` with a real worker (in this process) on its own task queue and store, against the test Temporal server.
 * The store is a new SQLite file in a temporary directory unless `target` names another (e.g. a PostgreSQL database).
 */
export async function withWorker<T>(
  name: string,
  fn: (world: TestWorld) => Promise<T>,
  env: NodeJS.ProcessEnv = process.env,
  target?: StoreTarget,
): Promise<T> {
  installQuietRuntime();
  const dir = tempDir(`jf-${name}-`);
  const storeFile = path.join(dir, 'results.db');
  const taskQueue = uniqueQueue(name);
  const storeTarget: StoreTarget = target ?? { kind: 'sqlite', file: storeFile };
  const { connection, namespace } = await connectWorker();
  const worker = await createWorker({ connection, namespace, taskQueue, store: storeTarget, env });
  const client = await connectClient();
  const store = openNew(storeTarget); // a second connection, as a CLI next to the worker would have
  try {
    // A run started unpinned goes to the deployment's current build: wait until this worker's build is it.
    return await worker.runUntil(async () => {
      const asked = Date.now();
      await workerCurrent.get(worker);
      if (Date.now() - asked > 5_000)
        fs.appendFileSync(
          path.join(process.env.JUDGEFLOW_TEST_SYSTEM_TMPDIR ?? os.tmpdir(), 'judgeflow-slow-current.log'),
          `${new Date().toISOString()} ${taskQueue}: current after ${Date.now() - asked} ms\n`,
        );
      return fn({ client, taskQueue, store, storeFile, dir });
    });
  } finally {
    await store.close();
    await client.connection.close();
    await connection.close();
  }
}

/** Write a JSON Lines file of LATTICE queries. */
export function writeQueries(dir: string, queries: Array<Record<string, unknown>>, name = 'queries.jsonl'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, queries.map((q) => JSON.stringify(q)).join('\n') + '\n');
  return file;
}

/** One query per task × category cell (80), or a smaller grid. */
export function latticeGrid(tasks = 16, categories = 5): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (let t = 1; t <= tasks; t++)
    for (let c = 1; c <= categories; c++)
      out.push({
        id: `t${t}-c${c}`,
        text: `Question about task ${t} in category ${c}: should I stake ETH on Lido?`,
        task: `T${t}`,
        category: `C${c}`,
      });
  return out;
}

/**
 * A run config as the end-to-end tests write it: queries given as rows are written to `dir` (a string is used as the
 * queries path as is), reports go to `dir`/runs, relative paths resolve against `dir`. One place for that boilerplate.
 */
export function runConfig(
  dir: string,
  fields: { queries: string | Array<Record<string, unknown>>; [field: string]: unknown },
) {
  const queries = typeof fields.queries === 'string' ? fields.queries : writeQueries(dir, fields.queries);
  return parseRunConfig({ ...fields, queries, output: path.join(dir, 'runs') }, 'test config', dir);
}

/** OpenAI-style copilots served by one sim server, name -> sim model (e.g. 'sim-thorough'): the usual cast of a test run. */
export function simCopilots(baseURL: string, models: Record<string, string>) {
  return Object.entries(models).map(([name, model]) => ({ name, type: 'openai', baseURL, model }));
}

/** Poll `check` every 100 ms until it holds; throws after `timeoutMs`, so a wait that never ends fails the test. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Until `read()` has kept its value for `quietMs`, which it returns: a simulated server's request count after the
 * process it served was killed or its workflow ended, since what that process sent before may still be on its way to
 * the server's event loop (counted later, such a request looks like one made again).
 */
export async function settled(read: () => number, quietMs = 300, timeoutMs = 10_000): Promise<number> {
  let last = read();
  let since = Date.now();
  await until(() => {
    const now = read();
    if (now !== last) [last, since] = [now, Date.now()];
    return Date.now() - since >= quietMs;
  }, timeoutMs);
  return last;
}
