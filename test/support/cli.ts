import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO } from './harness';

/** The real CLI entry point, as users run it; runCli and startWorkerProcess both start it. */
export const CLI = path.join(REPO, 'bin', 'judgeflow.js');

/**
 * Run the real CLI (`node bin/judgeflow.js ...`) as a child process, with the test environment
 * (TEMPORAL_ADDRESS of the test server, the workflow bundle) plus `env` (e.g. JUDGEFLOW_STORE, JUDGEFLOW_TASK_QUEUE).
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `judgeflow worker` as a separate process with exactly `env`, so a test can SIGKILL it the way an outage would. */
export function startWorkerProcess(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [CLI, 'worker'], { env, stdio: 'ignore' });
}
