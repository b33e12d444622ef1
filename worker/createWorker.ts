import type { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { createActivities } from '../activities';
import { openStore, storeTarget, type StoreTarget } from '../stores';
import { instrumentedStore } from './metrics';
import { workerTracing } from './tracing';
import { ReportThreads, reportThreadEnabled, type WriteResponses } from './reportThread';
import type { ResultsStore } from '../core/model/store';
import { deploymentVersion, makeCurrent, versioningEnabled, workflowBuild } from './versioning';

/** How long after a judge call first ends the worker's spare report thread starts (see warmSoon below). */
const REPORT_WARM_DELAY_MS = 3_000;

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Default: the one JUDGEFLOW_STORE / JUDGEFLOW_HOME in `env` names. */
  store?: StoreTarget;
  env?: NodeJS.ProcessEnv;
  /**
   * Make this worker's version the deployment's current one once it polls (default true): new unpinned runs (detached
   * starts, schedules) then go to this build. See worker/versioning.ts.
   */
  makeCurrent?: boolean;
}

/** A started worker's deployment version (undefined with JUDGEFLOW_WORKER_VERSIONING=0). */
export const workerVersions = new WeakMap<Worker, WorkerDeploymentVersion>();
/** Settles once a started worker's build is its deployment's current one (true), or making it so gave up (false). */
export const workerCurrent = new WeakMap<Worker, Promise<boolean>>();

/** A worker runs every workflow and activity of judgeflow; run as many as you like against one task queue. */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const env = options.env ?? process.env;
  const target = options.store ?? storeTarget(env);
  // The compiled CLI's dist/workflow-bundle.js (bundled with the build from the same sources), JUDGEFLOW_WORKFLOW_BUNDLE,
  // or, run from the sources, the workflows bundled now; its hash is the worker's build id.
  const build = await workflowBuild(env);
  const version = versioningEnabled(env) ? deploymentVersion(options.taskQueue, build.buildId) : undefined;
  // The worker SDK (native bridge, bundler) loads here, not when a command module that can start a worker is imported.
  const { Runtime, Worker } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  const tracing = workerTracing(env);
  const traced = (store: ResultsStore) => (tracing ? tracing.instrument(store) : store);
  const reports = reportThreadEnabled(env) ? new ReportThreads(target, env) : undefined;
  let warming: ReturnType<typeof setTimeout> | undefined;
  // The spare report thread loads its modules (about 0.35 s of CPU) once a run has judged for REPORT_WARM_DELAY_MS,
  // not over its first seconds, where it took a core from the workflow's tasks that hand out the first batches.
  const warmSoon = (threads: ReportThreads) => {
    if (threads.warmed || warming) return;
    warming = setTimeout(() => {
      warming = undefined;
      threads.warm();
    }, REPORT_WARM_DELAY_MS);
    warming.unref();
  };
  const worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: { code: build.code },
    // Each run stays on the build that started it (PINNED): no history is ever replayed on other workflow code.
    ...(version
      ? {
          workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' as const },
        }
      : {}),
    activities: createActivities({
      store: traced(instrumentedStore(await openStore(target), Runtime.instance().metricMeter)),
      env,
      // A report's statistics run on a thread of their own, so the activity keeps heartbeating (worker/reportThread.ts).
      ...(reports
        ? {
            renderReport: (runId: string, signal: AbortSignal, writeResponses?: WriteResponses) =>
              reports.render(runId, signal, writeResponses),
            warmReport: (runId: string) => {
              reports.judged(runId);
              warmSoon(reports);
            },
          }
        : {}),
    }),
    ...(tracing ? { interceptors: { activity: tracing.activityInterceptors } } : {}),
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
  if (reports) {
    // The spare report thread ends with the worker (runUntil goes through run too).
    const run = worker.run.bind(worker);
    worker.run = () => run().finally(() => reports.close());
  }
  if (version) {
    workerVersions.set(worker, version);
    if (options.makeCurrent ?? true) {
      // Registered by the worker's first poll, so this waits in the background; a failure only means unpinned runs
      // keep going to the previous current build.
      const current = makeCurrent(
        options.connection,
        options.namespace,
        version,
        () => !['INITIALIZED', 'RUNNING'].includes(worker.getState()),
      ).catch((error: Error) => {
        console.warn(
          `judgeflow worker: could not make build ${version.buildId} current on ${version.deploymentName}: ${error.message}`,
        );
        return false;
      });
      workerCurrent.set(worker, current);
    }
  }
  return worker;
}
