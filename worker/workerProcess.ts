/**
 * How a worker process starts. With Node's defaults (a heap limit of about 4 GB here, 16 MB young-generation semi-spaces,
 * eight malloc arenas per core) V8 lets garbage grow to several times the live heap before a full collection: a
 * paper-scale run's worker, with some 60 MB of live heap, held 661 MB. A smaller limit makes V8 collect sooner (its
 * growth factor shrinks with the limit), smaller semi-spaces halve the young generation of both isolates (the
 * activities' and the workflows' thread), and two malloc arenas keep the native side (the Temporal core's threads) from
 * spreading over one arena per thread. All three take effect only when a process starts, so judgeflow starts worker
 * processes with them (`judgeflow bench` and `demo`), and `judgeflow worker`/`dev` start themselves again with them
 * when they were not given. Small on purpose: bin/judgeflow.js loads it before the CLI.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import os from 'node:os';
import { InputError } from '../core/model/inputError';

/** The old-generation heap limit of a worker process unless NODE_OPTIONS or JUDGEFLOW_WORKER_HEAP_MB say otherwise. */
export const DEFAULT_WORKER_HEAP_MB = 512;
/** Each young-generation semi-space, unless NODE_OPTIONS sets one (with JUDGEFLOW_WORKER_HEAP_MB=0 Node's own). */
export const DEFAULT_WORKER_SEMI_SPACE_MB = 8;
/** glibc's malloc arenas (default: eight per core) unless MALLOC_ARENA_MAX is set. */
export const DEFAULT_MALLOC_ARENAS = '2';

/** Commands whose process is a long-running worker. */
const WORKER_COMMANDS = new Set(['worker', 'dev']);
/** Set in a worker process started by `relaunchAsWorkerProcess`, so it does not start itself again. */
const RELAUNCHED = 'JUDGEFLOW_WORKER_RELAUNCHED';
const HEAP_FLAG = /^--max[-_]old[-_]space[-_]size(=|$)/;
const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size(=|$)/;

export interface WorkerProcessSetup {
  /** Node flags to start the process with (before the script). */
  nodeArgs: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * Node flags and environment for a worker process started with `env`. A heap limit or semi-space size the user gave
 * (NODE_OPTIONS, or the current process's flags in `execArgv`) wins; JUDGEFLOW_WORKER_HEAP_MB sets another heap limit
 * (0: Node's own heap settings); a MALLOC_ARENA_MAX already set is kept. A JUDGEFLOW_WORKER_HEAP_MB that is not a whole
 * number is an InputError.
 */
export function workerProcessSetup(env: NodeJS.ProcessEnv, execArgv: readonly string[] = []): WorkerProcessSetup {
  const heapMb = workerHeapMb(env.JUDGEFLOW_WORKER_HEAP_MB);
  const given = [...(env.NODE_OPTIONS ?? '').split(/\s+/), ...execArgv];
  const unless = (flag: RegExp, arg: string) => (heapMb === 0 || given.some((g) => flag.test(g)) ? [] : [arg]);
  return {
    nodeArgs: [
      ...unless(HEAP_FLAG, `--max-old-space-size=${heapMb}`),
      ...unless(SEMI_SPACE_FLAG, `--max-semi-space-size=${DEFAULT_WORKER_SEMI_SPACE_MB}`),
    ],
    env: env.MALLOC_ARENA_MAX ? { ...env } : { ...env, MALLOC_ARENA_MAX: DEFAULT_MALLOC_ARENAS },
  };
}

/**
 * `judgeflow worker` (the CLI at `cli`) in a new process started with the worker settings for `env`, so it runs there
 * and does not start itself again: the returned process is the worker (its pid is the one to measure or kill).
 * `nodeArgs` are further Node flags (the bench's `--cpu-prof`, which NODE_OPTIONS does not take).
 */
export function spawnWorkerProcess(
  cli: string,
  env: NodeJS.ProcessEnv,
  options: Omit<SpawnOptions, 'env'> = {},
  nodeArgs: string[] = [],
): ChildProcess {
  const setup = workerProcessSetup(env);
  return spawn(process.execPath, [...setup.nodeArgs, ...nodeArgs, cli, 'worker'], { ...options, env: setup.env });
}

function workerHeapMb(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_WORKER_HEAP_MB;
  const mb = Number(value);
  if (!Number.isInteger(mb) || mb < 0) {
    throw new InputError(
      `JUDGEFLOW_WORKER_HEAP_MB must be a whole number of megabytes (the worker's V8 heap limit; 0 leaves Node's default), got "${value}"`,
    );
  }
  return mb;
}

/**
 * For `judgeflow worker`/`dev` started without the worker settings: run the same command again in a child process that
 * has them, pass it every stop signal, and resolve with its exit code. Otherwise null (run the command here). The child
 * has its own process group, so a terminal's Ctrl-C reaches it once, through this process; if this process is killed
 * (SIGKILL: an outage, `judgeflow demo`), the child kills itself the same way when its IPC channel closes.
 */
export function relaunchAsWorkerProcess(argv: string[], script: string): Promise<number> | null {
  if (process.env[RELAUNCHED]) {
    delete process.env[RELAUNCHED];
    if (process.send) {
      process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
      process.channel?.unref();
    }
    return null;
  }
  if (!WORKER_COMMANDS.has(argv[0] ?? '')) return null;
  let setup: WorkerProcessSetup;
  try {
    setup = workerProcessSetup(process.env, process.execArgv);
  } catch (error) {
    console.error(`judgeflow ${argv[0]}: ${(error as Error).message}`);
    return Promise.resolve(2);
  }
  if (setup.nodeArgs.length === 0 && process.env.MALLOC_ARENA_MAX === setup.env.MALLOC_ARENA_MAX) return null;
  const inherited = process.execArgv.filter((flag) => !flag.startsWith('--inspect')); // one debugger port, this process's
  const child = spawn(process.execPath, [...setup.nodeArgs, ...inherited, script, ...argv], {
    env: { ...setup.env, [RELAUNCHED]: '1' },
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of signals) process.on(signal, forward);
  return new Promise((resolve) => {
    child.once('error', (error) => {
      console.error(`judgeflow ${argv[0]}: could not start the worker process: ${error.message}`);
      resolve(1);
    });
    child.once('exit', (code, signal) => {
      for (const s of signals) process.off(s, forward);
      resolve(code ?? 128 + (signal ? os.constants.signals[signal] : 0));
    });
  });
}
