/**
 * The test environment of every test file: what a test prints (console.*) is held while it runs and shown only if the
 * test fails, with the test's name, so a passing run is quiet and a failing test still shows its logs.
 * JUDGEFLOW_TEST_LOGS=1 prints everything as it comes.
 */
const { format } = require('node:util');
const NodeEnvironment = require('jest-environment-node').TestEnvironment;

const METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'];

class QuietEnvironment extends NodeEnvironment {
  held = [];

  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    await super.setup();
    if (process.env.JUDGEFLOW_TEST_LOGS === '1') return;
    const held = this.held;
    const quiet = Object.create(this.global.console);
    for (const method of METHODS) quiet[method] = (...args) => void held.push(`console.${method}: ${format(...args)}`);
    this.global.console = quiet;
  }

  /** After the file's own afterAll hooks: a Temporal Runtime still up would keep this jest worker alive (quietTemporal.ts). */
  async teardown() {
    try {
      await this.global.__judgeflowShutdownTemporalRuntime?.();
    } catch {
      // a worker a failed test left running: that test has failed already; the process exits anyway
    } finally {
      await super.teardown();
      noteHandles(this.testPath);
    }
  }

  handleTestEvent(event) {
    if (event.name === 'test_start') this.held.length = 0;
    if (event.name === 'test_done' && event.test.errors.length && this.held.length) {
      const names = [];
      for (let block = event.test; block && block.name !== 'ROOT_DESCRIBE_BLOCK'; block = block.parent)
        names.unshift(block.name);
      process.stderr.write(`\n── output of the failing test "${names.join(' › ')}" ──\n${this.held.join('\n')}\n`);
      this.held.length = 0;
    }
  }
}

/**
 * JUDGEFLOW_TEST_HANDLES=FILE: after each test file, append the kinds of handle that keep this jest worker process alive
 * and that the file added, to find the file behind jest's "A worker process has failed to exit gracefully".
 */
let handlesBefore = new Map();
function noteHandles(testPath) {
  const file = process.env.JUDGEFLOW_TEST_HANDLES;
  if (!file) return;
  const now = new Map();
  for (const h of process._getActiveHandles()) {
    if (typeof h.hasRef === 'function' && !h.hasRef()) continue; // an unref'd handle does not keep the process alive
    const kind = h.constructor?.name ?? typeof h;
    now.set(kind, (now.get(kind) ?? 0) + 1);
  }
  const added = [...now]
    .filter(([kind, n]) => n > (handlesBefore.get(kind) ?? 0))
    .map(([k, n]) => `${k}+${n - (handlesBefore.get(k) ?? 0)}`);
  handlesBefore = now;
  if (added.length) require('node:fs').appendFileSync(file, `${process.pid} ${testPath}: ${added.join(' ')}\n`);
}

module.exports = QuietEnvironment;
