import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO } from './harness';

/** The real CLI entry point, as users run it; runCli and startWorkerProcess both start it. */
export const CLI = path.join(REPO, 'bin', 'judgeflow.js');

/**
 * Run the real CLI (`node bin/judgeflow.js ...`) as a child process, with the test environment
 * (TEMPORAL_ADDRESS of the test server, the workflow bundle) plus `env` (e.g. JUDGEFLOW_STORE, JUDGEFLOW_TASK_QUEUE).
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `judgeflow worker` as a separate process with exactly `env`, so a test can SIGKILL it the way an outage would. */
export function startWorkerProcess(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [CLI, 'worker'], { env, stdio: 'ignore' });
}

/**
 * A worker process a test can kill with SIGKILL and start again, with a client and the worker's SQLite store under
 * `home`; `close()` kills the worker and closes both.
 */
export async function killableWorker(
  home: string,
  queue: string,
): Promise<{
  env: Record<string, string> & { JUDGEFLOW_TASK_QUEUE: string };
  client: import('@temporalio/client').Client;
  store: import('../../stores/sqlite').SqliteStore;
  kill(): Promise<void>;
  restart(): void;
  close(): Promise<void>;
}> {
  const { connectClient } = await import('../../client/connection');
  const { SqliteStore } = await import('../../stores/sqlite');
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const env = { ...inherited, JUDGEFLOW_HOME: home, JUDGEFLOW_TASK_QUEUE: queue };
  let worker = startWorkerProcess(env);
  const client = await connectClient();
  const store = new SqliteStore(require('node:path').join(home, 'results.db'));
  return {
    env,
    client,
    store,
    async kill() {
      worker.kill('SIGKILL');
      await new Promise((r) => worker.once('exit', r));
    },
    restart() {
      worker = startWorkerProcess(env);
    },
    async close() {
      worker.kill('SIGKILL');
      await store.close();
      await client.connection.close();
    },
  };
}
