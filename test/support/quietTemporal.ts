/**
 * Runs before every test file (jest setupFiles): workers started by tests log errors only (client/connection.ts reads
 * JUDGEFLOW_LOG_LEVEL), so the warnings of activity failures that tests cause on purpose ("Activity failed", retries)
 * stay out of the output. JUDGEFLOW_TEST_LOGS=1 keeps the workers' usual level.
 */
if (process.env.JUDGEFLOW_TEST_LOGS !== '1') process.env.JUDGEFLOW_LOG_LEVEL ??= 'ERROR';

let installed = false;
/**
 * The Temporal Runtime of a test file's in-process workers (test/support/harness.ts): the SDK's log lines (activity
 * failures with their task tokens, worker state changes) and the Rust core's own (forwarded to the same logger rather
 * than printed by the core to stderr) go to `console`, which the test environment (quietEnvironment.js) holds and shows
 * only when a test fails. The Runtime object is per test file (each file has its own module registry).
 */
export function installQuietRuntime(): void {
  if (installed) return;
  installed = true;
  // Loaded here, not at the top: most test files run no worker and need not load the worker SDK.
  const { DefaultLogger, Runtime } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  const level = process.env.JUDGEFLOW_TEST_LOGS === '1' ? 'INFO' : 'WARN';
  const write = (entry: { level: string; message: string; meta?: Record<string, unknown> }) =>
    console.error(`[${entry.level}] ${entry.message}`, entry.meta ?? '');
  try {
    Runtime.install({
      logger: new DefaultLogger(level, write),
      telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } },
    });
  } catch {
    // already installed in this file (cliInProcess running a worker command first): keep it
  }
}
