/**
 * Runs before every test file (jest setupFiles): workers started by tests log errors only (client/connection.ts reads
 * JUDGEFLOW_LOG_LEVEL), so the warnings of activity failures that tests cause on purpose ("Activity failed", retries)
 * stay out of the output. JUDGEFLOW_TEST_LOGS=1 keeps the workers' usual level.
 */
if (process.env.JUDGEFLOW_TEST_LOGS !== '1') process.env.JUDGEFLOW_LOG_LEVEL ??= 'ERROR';

type WorkerSdk = typeof import('@temporalio/worker');

/**
 * The worker SDK's Runtime class if this file loaded it (itself, or through the client code it runs: an in-process
 * `judgeflow` command, a NativeConnection), found in the file's module registry without loading it. A Runtime still up
 * holds the native core's channel to JS, which keeps the jest worker process alive with no handle to show for it
 * ("A worker process has failed to exit gracefully"), whether or not the file called installQuietRuntime.
 */
function loadedRuntime(): { _instance?: { shutdown(): Promise<void>; backRefs?: Set<unknown> } } | undefined {
  const cache = (require as NodeJS.Require).cache ?? {};
  const key = Object.keys(cache).find((k) => /[\\/]@temporalio[\\/]worker[\\/]lib[\\/]runtime\.js$/.test(k));
  return key ? (cache[key]?.exports as { Runtime?: ReturnType<typeof loadedRuntime> })?.Runtime : undefined;
}

/**
 * Called by the test environment's teardown (quietEnvironment.js), after the file's afterAll hooks: shuts down whatever
 * Runtime the file left up, and says how many connections or workers were still open on it (for JUDGEFLOW_TEST_HANDLES).
 */
(globalThis as Record<string, unknown>).__judgeflowShutdownTemporalRuntime = async (): Promise<string | undefined> => {
  const runtime = loadedRuntime()?._instance;
  if (!runtime) return undefined;
  const open = runtime.backRefs?.size ?? 0;
  await runtime.shutdown();
  return `a Temporal Runtime left up with ${open} connection(s) or worker(s) open`;
};
/** The SDK's singleton, read without Runtime.instance() (which would create one). */
const current = (sdk: WorkerSdk) => (sdk.Runtime as unknown as { _instance?: { shutdown(): Promise<void> } })._instance;

/**
 * The Temporal Runtime of a test file's in-process workers (test/support/harness.ts; call it before a test makes a
 * worker or a TestWorkflowEnvironment of its own): the SDK's log lines (activity failures with their task tokens, worker
 * state changes, the workflow bundler's webpack summary) and the Rust core's own (forwarded to the same logger rather
 * than printed by the core to stderr) go to `console`, which the test environment (quietEnvironment.js) holds and shows
 * only when a test fails. The Runtime object is per test file (each file has its own module registry).
 *
 * The SDK shuts its Runtime down when the last connection or worker closes, and the next connection makes a new one:
 * this installs the quiet one again then (else the second worker of a file would log to stderr). A Runtime that is
 * installed but never used, or whose connection a failing test left open, would keep the jest worker process alive
 * ("A worker process has failed to exit gracefully"): the test environment's teardown shuts down whatever Runtime is
 * left, through the function this puts on the file's global.
 */
export function installQuietRuntime(): void {
  // Loaded here, not at the top: most test files run no worker and need not load the worker SDK.
  const sdk = require('@temporalio/worker') as WorkerSdk;
  if (current(sdk)) return; // this file's (installed earlier), or one a test installed itself: keep it
  const { DefaultLogger, Runtime } = sdk;
  const level = process.env.JUDGEFLOW_TEST_LOGS === '1' ? 'INFO' : 'WARN';
  const write = (entry: { level: string; message: string; meta?: Record<string, unknown> }) =>
    console.error(`[${entry.level}] ${entry.message}`, entry.meta ?? '');
  Runtime.install({
    logger: new DefaultLogger(level, write),
    telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } },
  });
}

/**
 * A MockActivityEnvironment (@temporalio/testing) whose activity logger writes to `console` (held by the test
 * environment, shown when a test fails) instead of the SDK's default, which writes to stderr: the activity failures and
 * warnings tests cause on purpose (with their task tokens and stack traces) stay out of a passing run's output.
 * Lines read as the SDK's default logger writes them: `<ISO time> [LEVEL] message`, then the metadata.
 */
export function quietActivityEnvironment(
  info?: ConstructorParameters<typeof import('@temporalio/testing').MockActivityEnvironment>[0],
): import('@temporalio/testing').MockActivityEnvironment {
  const { MockActivityEnvironment } = require('@temporalio/testing') as typeof import('@temporalio/testing');
  const { DefaultLogger } = require('@temporalio/worker') as WorkerSdk;
  const logger = new DefaultLogger(process.env.JUDGEFLOW_TEST_LOGS === '1' ? 'INFO' : 'WARN', (entry) =>
    console.error(
      `${new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString()} [${entry.level}] ${entry.message}`,
      entry.meta ?? '',
    ),
  );
  return new MockActivityEnvironment(info, { logger });
}
