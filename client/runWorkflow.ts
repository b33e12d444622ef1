import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { InputError } from '../core/validate';
import { closeSharedBrowser } from '../activities/adapters/browser';
import type { Worker } from '@temporalio/worker';
import { defaultStorePath } from '../core/store';
import { createWorker } from '../worker/createWorker';
import { connectClient, connectWorker, taskQueue } from './connection';
import { ensureLocalServer } from './temporalServer';

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
}): Promise<R | undefined> {
  const env = args.env ?? process.env;
  await ensureLocalServer({ env, log: args.print });
  const client = await connectClient(env);
  let worker: Worker | undefined;
  let workerDone: Promise<void> | undefined;
  try {
    if (!args.detach) {
      const { connection, namespace } = await connectWorker(env);
      worker = await createWorker({ connection, namespace, taskQueue: taskQueue(env), storeFile: defaultStorePath(env), env });
      workerDone = worker.run();
    }
    const handle = await client.workflow.start(args.workflow, { taskQueue: taskQueue(env), workflowId: args.workflowId, args: [args.input] });
    args.print(`Started ${args.workflowId} (task queue ${taskQueue(env)})`);
    if (args.detach) return undefined;
    try {
      return await (args.wait ? args.wait(handle) : handle.result());
    } catch (error) {
      // Bad input found by an activity (a malformed traffic file, an unknown run) is the user's to fix: exit 2, not 1.
      const cause = error instanceof WorkflowFailedError ? deepestCause(error) : undefined;
      if (cause instanceof ApplicationFailure && cause.type === 'InputError') throw new InputError(cause.message);
      throw error;
    }
  } finally {
    if (worker) {
      worker.shutdown();
      await workerDone?.catch(() => undefined);
      await closeSharedBrowser(); // the browser adapter's one browser per worker process
    }
    await client.connection.close();
  }
}

function deepestCause(error: Error): Error {
  let e: Error = error;
  while ((e as { cause?: Error }).cause instanceof Error) e = (e as { cause: Error }).cause;
  return e;
}

/** Run `fn` with a connected client (closed afterwards). */
export async function withClient<T>(fn: (client: Client) => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const client = await connectClient(env);
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
  }
}
