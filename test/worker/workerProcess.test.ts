import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { InputError } from '../../core/model/inputError';
import { DEFAULT_WORKER_HEAP_MB, DEFAULT_WORKER_SEMI_SPACE_MB, workerProcessSetup } from '../../worker/workerProcess';
import { CLI } from '../support/cli';
import { tempDir, uniqueQueue, until } from '../support/harness';

/** A worker process gets a heap limit and fewer malloc arenas unless the user chose their own; `judgeflow worker` too. */

test('worker process settings: the default heap limits and arenas; the user’s NODE_OPTIONS / MALLOC_ARENA_MAX / JUDGEFLOW_WORKER_HEAP_MB win', () => {
  const heap = `--max-old-space-size=${DEFAULT_WORKER_HEAP_MB}`;
  const semi = `--max-semi-space-size=${DEFAULT_WORKER_SEMI_SPACE_MB}`;
  expect(workerProcessSetup({ PATH: '/bin' })).toEqual({
    nodeArgs: [heap, semi],
    env: { PATH: '/bin', MALLOC_ARENA_MAX: '2' },
  });
  expect(workerProcessSetup({ NODE_OPTIONS: '--enable-source-maps --max-old-space-size=300' }).nodeArgs).toEqual([
    semi,
  ]);
  expect(workerProcessSetup({ NODE_OPTIONS: '--max_semi_space_size=4' }).nodeArgs).toEqual([heap]);
  expect(workerProcessSetup({ NODE_OPTIONS: '--max-old-space-size-extra=1' }).nodeArgs).toEqual([heap, semi]);
  expect(workerProcessSetup({}, ['--max_old_space_size=100', '--max-semi-space-size=2']).nodeArgs).toEqual([]);
  expect(workerProcessSetup({ JUDGEFLOW_WORKER_HEAP_MB: '768' }).nodeArgs).toEqual(['--max-old-space-size=768', semi]);
  expect(workerProcessSetup({ JUDGEFLOW_WORKER_HEAP_MB: '0' })).toEqual({
    nodeArgs: [],
    env: { JUDGEFLOW_WORKER_HEAP_MB: '0', MALLOC_ARENA_MAX: '2' },
  });
  expect(workerProcessSetup({ MALLOC_ARENA_MAX: '8' }).env.MALLOC_ARENA_MAX).toBe('8');
  expect(() => workerProcessSetup({ JUDGEFLOW_WORKER_HEAP_MB: '1.5GB' })).toThrow(InputError);
  expect(() => workerProcessSetup({ JUDGEFLOW_WORKER_HEAP_MB: '1.5GB' })).toThrow(
    /JUDGEFLOW_WORKER_HEAP_MB must be a whole number of megabytes.*"1\.5GB"/,
  );
});

/** Child processes of `pid` that run the CLI (Linux /proc; run from the sources, tsx has a helper process too). */
function cliChildrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return (
          Number(fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === pid &&
          fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(CLI)
        );
      } catch {
        return false; // exited meanwhile
      }
    })
    .map(Number);
}

const isAlive = (pid: number) =>
  fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));

/** `judgeflow worker` as a user starts it, on its own queue; resolves once it polls. */
async function startWorker(env: NodeJS.ProcessEnv): Promise<{ proc: ChildProcess; exited: Promise<number | null> }> {
  const { NODE_OPTIONS: _n, MALLOC_ARENA_MAX: _m, JUDGEFLOW_WORKER_HEAP_MB: _h, ...inherited } = process.env;
  const proc = spawn(process.execPath, [CLI, 'worker'], {
    env: {
      ...inherited,
      JUDGEFLOW_HOME: tempDir('jf-workerproc-'),
      JUDGEFLOW_TASK_QUEUE: uniqueQueue('workerproc'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  await until(() => output.includes('Worker polling'), 60_000).catch((error) => {
    proc.kill('SIGKILL');
    throw new Error(`${error.message}\n${output}`);
  });
  return { proc, exited };
}

test('judgeflow worker runs in a process with the worker settings; SIGTERM stops it gracefully, SIGKILL kills it too', async () => {
  const first = await startWorker({});
  const [worker] = cliChildrenOf(first.proc.pid!);
  expect(worker).toBeDefined();
  expect(fs.readFileSync(`/proc/${worker}/cmdline`, 'utf8').split('\0')).toEqual(
    expect.arrayContaining([
      `--max-old-space-size=${DEFAULT_WORKER_HEAP_MB}`,
      `--max-semi-space-size=${DEFAULT_WORKER_SEMI_SPACE_MB}`,
      CLI,
      'worker',
    ]),
  );
  expect(fs.readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
  first.proc.kill('SIGTERM'); // forwarded: the worker shuts down and its exit code comes back
  expect(await first.exited).toBe(0);
  expect(isAlive(worker)).toBe(false);

  const second = await startWorker({});
  const [killedWith] = cliChildrenOf(second.proc.pid!);
  second.proc.kill('SIGKILL'); // an outage: the worker must not live on without its launcher
  await second.exited;
  await until(() => !isAlive(killedWith), 10_000);
}, 120_000);

test('judgeflow worker given its own heap limit and arenas runs in the process started', async () => {
  const own = await startWorker({
    NODE_OPTIONS: '--max-old-space-size=300 --max-semi-space-size=4',
    MALLOC_ARENA_MAX: '4',
  });
  try {
    expect(cliChildrenOf(own.proc.pid!)).toEqual([]);
  } finally {
    own.proc.kill('SIGTERM');
    expect(await own.exited).toBe(0);
  }
}, 60_000);

test('a JUDGEFLOW_WORKER_HEAP_MB that is not a number stops judgeflow worker with exit code 2 and says why', async () => {
  const proc = spawn(process.execPath, [CLI, 'worker'], {
    env: { ...process.env, NODE_OPTIONS: '', JUDGEFLOW_WORKER_HEAP_MB: 'lots' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  expect(await new Promise((resolve) => proc.once('exit', resolve))).toBe(2);
  expect(stderr).toContain('JUDGEFLOW_WORKER_HEAP_MB must be a whole number of megabytes');
}, 60_000);
