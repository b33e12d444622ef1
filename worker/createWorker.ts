import fs from 'node:fs';
import path from 'node:path';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { openStore, storeTarget, type StoreTarget } from '../stores';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Default: the one JUDGEFLOW_STORE / JUDGEFLOW_HOME in `env` names. */
  store?: StoreTarget;
  env?: NodeJS.ProcessEnv;
  /**
   * Path of a pre-bundled workflow file (JUDGEFLOW_WORKFLOW_BUNDLE); by default the compiled CLI's dist/workflow-bundle.js
   * (bundled with the build from the same sources); run from the sources, the workflows are bundled at start-up.
   */
  workflowBundlePath?: string;
}

/** A worker runs every workflow and activity of judgeflow; run as many as you like against one task queue. */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const env = options.env ?? process.env;
  // __filename, not __dirname: the build points a compiled module's __dirname at its source folder (scripts/build.js).
  const bundle = options.workflowBundlePath ?? (env.JUDGEFLOW_WORKFLOW_BUNDLE || path.join(path.dirname(__filename), '..', 'workflow-bundle.js'));
  // The worker SDK (native bridge, bundler) loads here, not when a command module that can start a worker is imported.
  const { Worker } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  // The OpenAI SDK loads lazily (a short CLI command never needs it); a worker will, so it loads now rather than in
  // the first calls of a run, all at once.
  require('openai');
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(bundle && fs.existsSync(bundle) ? { workflowBundle: { codePath: bundle } } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({ store: await openStore(options.store ?? storeTarget(env)), env }),
    maxConcurrentActivityTaskExecutions: Number(env.JUDGEFLOW_MAX_ACTIVITIES ?? 32),
    // A cancel reaches a running activity in a heartbeat response; heartbeats leave at most every 2 s (not 8 s, the
    // default for a 10 s heartbeat timeout), so a cancelled run stops calling copilots and judges within seconds.
    maxHeartbeatThrottleInterval: '2 seconds',
    // An error thrown by workflow code fails the run (with its message) instead of failing the workflow task, which the
    // server would retry for ever; benchmarkRun records the reason in the store first. Non-determinism still retries,
    // so a deployed fix can resume the run.
    workflowFailureErrorTypes: { '*': ['Error'] },
    // A stopping worker (Ctrl-C) cancels its activities at once; they abort their calls and Temporal hands them on.
    shutdownGraceTime: '1 second',
  });
}
