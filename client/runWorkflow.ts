import type { Client, WorkflowHandle, WorkflowStartOptions } from '@temporalio/client';
import { pinnedVersion, versionNotYetPresent } from '../worker/versioning';
import { ApplicationFailure, type Priority } from '@temporalio/common';
import { InputError } from '../core/model/inputError';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { connectClient, connectWorker, taskQueue } from './connection';
import { ensureLocalServer, temporalTarget } from './temporalServer';
import { Interrupted } from './interrupted';
import { temporalClient } from './temporalSdk';

/**
 * Start a workflow and, unless detached, run a worker in this process until it finishes (as `judgeflow run` does).
 * Used by the snapshot commands; the workflow is durable either way: a detached one runs on any worker.
 */
export async function runWorkflow<R>(args: {
  workflow: (...a: any[]) => Promise<R>;
  workflowId: string;
  input: unknown;
  detach: boolean;
  print: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  /** How to wait for the result (e.g. while printing progress); default: just wait. */
  wait?: (handle: WorkflowHandle<(...a: any[]) => Promise<R>>) => Promise<R>;
  /** Kept with the workflow on Temporal (e.g. a run's key, client/runIdentity.ts). */
  memo?: Record<string, unknown>;
  /** Attach to this open workflow (started earlier with the same key) instead of starting one. */
  attach?: boolean;
  /** Its task priority and fairness key (client/runPriority.ts); its activities and child workflows inherit them. */
  priority?: Priority;
  /** Once the workflow has ended: open workflows on the queue that need this process's worker to go on (see below). */
  orphans?: (client: Client, queue: string) => Promise<string[]>;
}): Promise<R | undefined> {
  const env = args.env ?? process.env;
  // Ctrl-C must return to the shell at once: the run is durable, so stopping only stops this process's part in it.
  const interrupt = args.detach ? undefined : interruption(args.workflowId);
  let client: Client | undefined;
  let worker: Worker | undefined;
  let workerConnection: NativeConnection | undefined;
  let workerDone: Promise<void> | undefined;
  let workerVersions: typeof import('../worker/createWorker').workerVersions | undefined;
  try {
    await untilInterrupted(ensureLocalServer({ env, log: args.print }), interrupt);
    client = await connectClient(env);
    const queue = await taskQueue(env);
    if (!args.detach) {
      const { connection, namespace } = await connectWorker(env, { omitWorkflowWarnings: Boolean(args.wait) });
      workerConnection = connection;
      // The worker and its activities load only here: status and detached starts (which use this module) never run one.
      const { createWorker, workerVersions: versions } =
        require('../worker/createWorker') as typeof import('../worker/createWorker');
      workerVersions = versions;
      worker = await createWorker({ connection, namespace, taskQueue: queue, env });
      workerDone = worker.run();
    }
    // Hosting a worker, the run is pinned to that worker's build (worker/versioning.ts): it runs the code of the
    // checkout that started it. Detached, it goes to the deployment's current build (the newest worker started).
    const version = worker ? workerVersions?.get(worker) : undefined;
    if (args.attach) await attachable(client, args.workflowId, version);
    const handle = args.attach
      ? client.workflow.getHandle<(...a: any[]) => Promise<R>>(args.workflowId)
      : await startWorkflow(client, args.workflow, {
          taskQueue: queue,
          workflowId: args.workflowId,
          args: [args.input],
          ...(args.memo ? { memo: args.memo } : {}),
          ...(args.priority ? { priority: args.priority } : {}),
          ...(version ? { versioningOverride: { pinnedTo: version } } : {}),
        });
    if (interrupt) interrupt.started = true;
    args.print(
      args.attach
        ? `Attached to ${args.workflowId} (task queue ${queue})`
        : `Started ${args.workflowId} (task queue ${queue})`,
    );
    if (args.detach) return undefined;
    try {
      const result = await untilInterrupted(args.wait ? args.wait(handle) : handle.result(), interrupt);
      if (args.orphans) {
        const serving = { open: [] as string[] };
        try {
          await untilInterrupted(finishOrphans(client, queue, args.orphans, args.print, serving), interrupt);
        } catch (error) {
          // This run is done; what Ctrl-C leaves open now are the runs this process was serving.
          if (error instanceof Interrupted && serving.open.length)
            throw new Interrupted(error.signal, serving.open.join(', '), true);
          throw error;
        }
      }
      return result;
    } catch (error) {
      if (error instanceof Interrupted) throw error;
      // Bad input found by an activity (a malformed traffic file, an unknown run) is the user's to fix: exit 2, not 1.
      const cause = error instanceof temporalClient().WorkflowFailedError ? deepestCause(error) : undefined;
      if (cause instanceof ApplicationFailure && cause.type === 'InputError') throw new InputError(cause.message);
      throw error;
    }
  } finally {
    interrupt?.dispose();
    if (worker) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      const stopped = workerDone?.catch(() => undefined);
      // After Ctrl-C, don't wait long for in-flight calls: they are cancelled, and Temporal hands them to the next worker.
      let bound: NodeJS.Timeout | undefined;
      await (interrupt?.signal ? Promise.race([stopped, new Promise((r) => (bound = setTimeout(r, 2_000)))]) : stopped);
      clearTimeout(bound);
      const { closeSharedBrowser } =
        require('../activities/adapters/browser') as typeof import('../activities/adapters/browser');
      await closeSharedBrowser(); // the browser adapter's one browser per worker process
    }
    // The worker's connection last: closing it lets the SDK shut its Runtime down (its log forwarding would otherwise keep
    // a process that calls this, such as a test, alive). A worker still stopping after Ctrl-C holds it: the exit ends both.
    await workerConnection?.close().catch(() => undefined);
    await client?.connection.close();
  }
}

/**
 * An open run can be attached to when this process's worker can run it: it is pinned to this checkout's build (the
 * same code started it) or to none. Pinned to another build, only `judgeflow resume` moves it here.
 */
async function attachable(client: Client, workflowId: string, version: { buildId: string } | undefined): Promise<void> {
  const pinned = pinnedVersion((await client.workflow.getHandle(workflowId).describe()).raw);
  if (pinned && version && pinned.buildId !== version.buildId)
    throw new InputError(
      `run ${workflowId} with this config is open but pinned to build ${pinned.buildId}, and this checkout is build ${version.buildId} (the code changed since it started): judgeflow resume ${workflowId} moves it onto this build and asks only what the results store does not hold`,
    );
}

/**
 * This process's worker also took tasks of other runs on its queue. A run started by an attached `judgeflow run`
 * whose process is gone (killed, closed laptop) has only the workers still polling: leaving now would leave it open
 * with nobody to finish it. So the process goes on serving such runs until they end, saying so; Ctrl-C hands them
 * back (interruptedMessage says how to continue).
 */
async function finishOrphans(
  client: Client,
  queue: string,
  orphans: (client: Client, queue: string) => Promise<string[]>,
  print: (line: string) => void,
  serving: { open: string[] },
): Promise<void> {
  let open = (serving.open = await orphans(client, queue));
  if (!open.length) return;
  print(
    `${open.join(', ')} ${open.length === 1 ? 'is' : 'are'} still open on task queue ${queue} with no process of its own: this process keeps working until ${open.length === 1 ? 'it ends' : 'they end'} (Ctrl-C hands ${open.length === 1 ? 'it' : 'them'} back; \`judgeflow worker\` or the same \`judgeflow run\` command continues ${open.length === 1 ? 'it' : 'them'}).`,
  );
  while (open.length) {
    await Promise.all(
      open.map((id) =>
        client.workflow
          .getHandle(id)
          .result()
          .catch(() => undefined),
      ),
    );
    open = serving.open = await orphans(client, queue);
  }
  print('Every run this process was serving has ended.');
}

interface Interruption {
  promise: Promise<never>;
  signal?: NodeJS.Signals;
  started: boolean;
  dispose(): void;
}

function interruption(workflowId: string): Interruption {
  let reject!: (error: Interrupted) => void;
  const state: Interruption = {
    promise: new Promise<never>((_, r) => (reject = r)),
    started: false,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
  state.promise.catch(() => undefined);
  const onSignal = (signal: NodeJS.Signals) => {
    state.signal = signal;
    reject(new Interrupted(signal, workflowId, state.started));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return state;
}

function untilInterrupted<T>(work: Promise<T>, interrupt: Interruption | undefined): Promise<T> {
  if (!interrupt) return work;
  work.catch(() => undefined); // abandoned on interrupt
  return Promise.race([work, interrupt.promise]);
}

function deepestCause(error: Error): Error {
  let e: Error = error;
  while ((e as { cause?: Error }).cause instanceof Error) e = (e as { cause: Error }).cause;
  return e;
}

/**
 * Start a workflow. Pinned to a worker's build, the start waits (up to 90 s: a loaded machine registers it late) for that worker's first poll to register
 * the build with the server, which refuses a pin to a version it has not seen.
 */
export async function startWorkflow<W extends (...a: any[]) => Promise<any>>(
  client: Client,
  workflow: W,
  options: WorkflowStartOptions<W>,
): Promise<WorkflowHandle<W>> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      return await client.workflow.start(workflow, options);
    } catch (error) {
      if (temporalClient().isGrpcDeadlineError(error)) throw unansweredStart(client, error as Error);
      if (!versionNotYetPresent(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * A server that accepts connections but does not answer (a stale dev server left from an earlier session, or one too
 * loaded to keep up) fails the start with gRPC's bare "4 DEADLINE_EXCEEDED": say which server, and what to do.
 */
function unansweredStart(client: Client, error: Error): Error {
  const address =
    (client.connection as { options?: { address?: string } }).options?.address ?? temporalTarget().address;
  return new Error(
    `The Temporal server at ${address} accepted the connection but did not answer the workflow start in time (${error.message}). ` +
      `It may be a stale or overloaded server: check it (judgeflow server status), restart it (judgeflow server stop, if judgeflow started it; ` +
      `the next command starts a fresh one), or point TEMPORAL_ADDRESS at a server that answers.`,
  );
}

/** Run `fn` with a connected client (closed afterwards). */
export async function withClient<T>(
  fn: (client: Client) => Promise<T>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<T> {
  const client = await connectClient(env);
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
  }
}
