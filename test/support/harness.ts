import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { connectClient, connectWorker } from '../../client/connection';
import { ResultsStore } from '../../core/store';
import { createWorker } from '../../worker/createWorker';

export const REPO = path.resolve(__dirname, '..', '..');
export const SHARED = path.resolve(REPO, '..', 'shared');

let runtimeInstalled = false;
/** Keep worker logs to errors so test output stays readable. */
function quietRuntime() {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // already installed by an earlier test in this process
  }
}

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

/** Run `fn` with a real worker (in this process) on its own task queue and store, against the test Temporal server. */
export async function withWorker<T>(name: string, fn: (world: TestWorld) => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  quietRuntime();
  const dir = tempDir(`jf-${name}-`);
  const storeFile = path.join(dir, 'results.db');
  const taskQueue = uniqueQueue(name);
  const { connection, namespace } = await connectWorker();
  const worker = await createWorker({ connection, namespace, taskQueue, storeFile, env });
  const client = await connectClient();
  const store = new ResultsStore(storeFile);
  try {
    return await worker.runUntil(fn({ client, taskQueue, store, storeFile, dir }));
  } finally {
    store.close();
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
    for (let c = 1; c <= categories; c++) out.push({ id: `t${t}-c${c}`, text: `Question about task ${t} in category ${c}: should I stake ETH on Lido?`, task: `T${t}`, category: `C${c}` });
  return out;
}
