import fs from 'node:fs';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { openStore } from '../core/store';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  storeFile: string;
  env?: NodeJS.ProcessEnv;
  /** Path of a pre-bundled workflow file (JUDGEFLOW_WORKFLOW_BUNDLE); otherwise the workflows are bundled at start-up. */
  workflowBundlePath?: string;
}

/** A worker runs every workflow and activity of judgeflow; run as many as you like against one task queue. */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const env = options.env ?? process.env;
  const bundle = options.workflowBundlePath ?? env.JUDGEFLOW_WORKFLOW_BUNDLE;
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(bundle && fs.existsSync(bundle) ? { workflowBundle: { codePath: bundle } } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({ store: openStore(options.storeFile), env }),
    maxConcurrentActivityTaskExecutions: Number(env.JUDGEFLOW_MAX_ACTIVITIES ?? 32),
  });
}
