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
  /** The file's timers (setTimeout/setInterval of its global: its tests' and the code they load), with where each was set. */
  timers = new Map();

  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    await super.setup();
    trackTimers(this.global, this.timers);
    if (process.env.JUDGEFLOW_TEST_HANDLES) everyFilesTimers.push([this.testPath, this.timers]);
    if (process.env.JUDGEFLOW_TEST_HANDLES) noteSetup();
    if (process.env.JUDGEFLOW_TEST_LOGS === '1') return;
    const held = this.held;
    const quiet = Object.create(this.global.console);
    for (const method of METHODS) quiet[method] = (...args) => void held.push(`console.${method}: ${format(...args)}`);
    this.global.console = quiet;
  }

  /** A Temporal Runtime the file left up would keep this jest worker alive (quietTemporal.ts): shut it down. */
  async shutdownTemporalRuntime() {
    try {
      this.runtimeLeft = (await this.global.__judgeflowShutdownTemporalRuntime?.()) ?? '';
    } catch (error) {
      // a worker a failed test left running: that test has failed already; the process exits anyway
      this.runtimeLeft = `a Temporal Runtime left up that would not shut down: ${error}`;
    }
  }

  /**
   * After the file's own afterAll hooks: a timer the file left pending (a bound raced against a call and never cleared)
   * would keep this jest worker alive: that fails the file. The shared results stores the file's workers and in-process
   * commands opened are closed.
   */
  async teardown() {
    let left = [];
    try {
      if (this.runtimeLeft === undefined) await this.shutdownTemporalRuntime(); // no 'teardown' event (a failed setup)
    } finally {
      // The file's shared results stores (stores/index.ts closeStores): left open, each SQLite one is checkpointed as
      // the jest worker exits, and tens of them outlast jest's 0.5 s wait for it ("failed to exit gracefully").
      await this.global[Symbol.for('judgeflow.closeStores')]?.();
      left = await pendingTimers(this.timers);
      await super.teardown();
      noteHandles(this.testPath, this.runtimeLeft);
    }
    if (left.length)
      throw new Error(
        `${this.testPath} left ${left.length} timer(s) pending after its tests, which keep the jest worker process from ` +
          `exiting ("A worker process has failed to exit gracefully"); clear them (or unref them) where they are set:\n  ` +
          left.join('\n  '),
      );
  }

  async handleTestEvent(event) {
    // After the file's afterAll hooks, while its module registry (where quietTemporal.ts finds the SDK) is still up.
    if (event.name === 'teardown') await this.shutdownTemporalRuntime();
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
 * JUDGEFLOW_TEST_HANDLES=FILE: 0.3 s after each test file, append every handle this jest worker process still holds (for
 * the last file of a worker, what holds it when jest asks it to exit); 3 s after, the child processes, servers and
 * sockets the file itself opened that are still open. One just closing at teardown (a child killed, not yet reaped)
 * is not one.
 */
/**
 * JUDGEFLOW_TEST_HANDLES=FILE, once per jest worker process: when jest asks the process to end, what it still holds,
 * again 400 ms later (jest force-kills it at 500 ms), and when its 'exit' event comes; a process whose exit is logged
 * but which was still killed spent the time in native clean-up (add-ons' exit hooks), one without it was held alive.
 */
/** Each test file's timers this process ran (JUDGEFLOW_TEST_HANDLES only): the file's path and its `timers` map. */
const everyFilesTimers = [];
if (process.env.JUDGEFLOW_TEST_HANDLES && process.send && !process.__judgeflowExitNoted) {
  process.__judgeflowExitNoted = true;
  const fs = require('node:fs');
  const file = process.env.JUDGEFLOW_TEST_HANDLES;
  const line = (what) => fs.appendFileSync(file, `${process.pid} ${new Date().toISOString()} ${what}\n`);
  process.on('message', function ended(message) {
    if (!Array.isArray(message) || message[0] !== 2) return; // jest-worker's CHILD_MESSAGE_END
    process.removeListener('message', ended); // a listener left would hold the IPC channel, and the process, open
    // Timers any file's code set after its teardown (a retry, a reconnect) and still pending, with where they were set.
    for (const [testPath, timers] of everyFilesTimers)
      for (const [t, at] of timers)
        if (typeof t === 'object' && !t._destroyed && t.hasRef?.()) line(`pending timer of ${testPath}: ${at}`);
    line(
      `asked to end (${fs.readdirSync('/proc/self/task').length} threads): ${process.getActiveResourcesInfo().join(',')}`,
    );
    setTimeout(() => line(`400 ms after: ${process.getActiveResourcesInfo().join(',')}`), 400).unref();
  });
  process.on('exit', () => {
    line('exit event');
    // JUDGEFLOW_TEST_EXIT_STACKS=1: if the process is still there 250 ms (JUDGEFLOW_TEST_EXIT_STACKS_MS) after its exit event (native clean-up), its
    // threads' stacks (gdb) go to FILE.stacks-PID.
    if (process.env.JUDGEFLOW_TEST_EXIT_STACKS !== '1') return;
    const ms = Number(process.env.JUDGEFLOW_TEST_EXIT_STACKS_MS ?? 250);
    const script =
      `sleep ${ms / 1000}; if kill -0 ${process.pid} 2>/dev/null; then ` +
      `echo "${process.pid} alive ${ms} ms after its exit event" >> ${file}; ` +
      `gdb -p ${process.pid} -batch -ex 'thread apply all bt 15' > ${file}.stacks-${process.pid} 2>&1; fi`;
    require('node:child_process').spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
  });
}

const refd = () => process._getActiveHandles().filter((h) => typeof h.hasRef !== 'function' || h.hasRef());
let handlesBefore = new Set();
function noteSetup() {
  handlesBefore = new Set(refd());
}
function describeHandle(h) {
  const kind = h.constructor?.name ?? typeof h;
  if (kind === 'ChildProcess') return `ChildProcess ${h.pid}: ${(h.spawnargs ?? []).join(' ').slice(0, 160)}`;
  if (kind === 'Server') return `Server ${JSON.stringify(h.address?.())}`;
  if (kind === 'Socket')
    return `Socket ${h.remoteAddress ? `${h.remoteAddress}:${h.remotePort}` : `fd ${h._handle?.fd ?? '?'}`}`;
  return kind;
}
function noteHandles(testPath, runtimeLeft) {
  const file = process.env.JUDGEFLOW_TEST_HANDLES;
  if (!file) return;
  const opened = refd().filter((h) => !handlesBefore.has(h));
  const fs = require('node:fs');
  if (runtimeLeft) fs.appendFileSync(file, `${process.pid} ${testPath} at teardown: ${runtimeLeft} (shut down)\n`);
  setTimeout(() => {
    const all = refd().map(describeHandle).join('; ');
    fs.appendFileSync(
      file,
      `${process.pid} ${testPath} 0.3 s after: ${process.getActiveResourcesInfo().join(',')} | ${all}\n`,
    );
  }, 300).unref();
  setTimeout(() => {
    const alive = new Set(refd());
    const left = opened.filter((h) => alive.has(h)).map(describeHandle);
    fs.appendFileSync(file, `${process.pid} ${testPath} 3 s after: ${left.length ? left.join('; ') : 'nothing'}\n`);
  }, 3_000).unref();
}

/** Record each timer the file's global sets, with the first frames of where it was set (for the teardown's error). */
function trackTimers(global, timers) {
  let prune = 1_000; // timers that fired or were cleared are dropped now and then, so the map holds no file's history
  for (const name of ['setTimeout', 'setInterval']) {
    const original = global[name];
    global[name] = function (fn, ms, ...rest) {
      const timer = original.call(this, fn, ms, ...rest);
      if (timers.size >= prune) {
        for (const [t] of timers) if (t._destroyed) timers.delete(t);
        prune = Math.max(1_000, 2 * timers.size);
      }
      const frames = (new Error().stack ?? '').split('\n').slice(2, 5);
      timers.set(timer, `${name}(…, ${ms}) ${frames.map((f) => f.trim()).join(' < ')}`);
      return timer;
    };
  }
}

/** The file's timers still pending and ref'd once those due within a second have had the time to fire; cleared. */
async function pendingTimers(timers) {
  const pending = () => [...timers].filter(([t]) => typeof t === 'object' && !t._destroyed && t.hasRef?.());
  for (let waited = 0; pending().length && waited < 1_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  const left = pending();
  for (const [t] of left) clearTimeout(t); // the file fails for them; they need not hold the worker process too
  return left.map(([, at]) => at);
}

module.exports = QuietEnvironment;
