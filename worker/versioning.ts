import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ConnectionLike } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';

/**
 * Worker Versioning (Temporal worker deployments) instead of `patched()` branches.
 *
 * Every worker is a version of one deployment: the deployment is the task queue (one per results store, see
 * client/connection.ts), the build id is a hash of the workflow bundle the worker runs. Each workflow is PINNED to the
 * version that ran its first task, so a worker never replays a history on workflow code it was not started with: a
 * nondeterminism error cannot reach a user. A worker makes its version the deployment's current one when it starts, so
 * new runs go to the newest build; runs pinned to an older build keep going on that build's workers, and once none is
 * left `judgeflow resume RUN_ID` continues them on the current build from what the results store holds (the workflow
 * is started afresh with `resumeFromStore`, nothing asked twice). Servers without worker deployments (before Temporal
 * 1.28): set JUDGEFLOW_WORKER_VERSIONING=0, and drain old runs before upgrading.
 */

/** The workflow bundle a worker of this checkout runs: the build's dist/workflow-bundle.js, or JUDGEFLOW_WORKFLOW_BUNDLE. */
export function workflowBundlePath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  // __filename, not __dirname: the build points a compiled module's __dirname at its source folder (scripts/build.js).
  const bundle = env.JUDGEFLOW_WORKFLOW_BUNDLE || path.join(path.dirname(__filename), '..', 'workflow-bundle.js');
  return fs.existsSync(bundle) ? bundle : undefined;
}

const bundles = new Map<string, { code: string; buildId: string }>();

/**
 * The workflow code a worker runs, with its build id (the first 12 hex digits of the code's SHA-256, or
 * JUDGEFLOW_BUILD_ID). Run from the sources with no bundle built, the workflows are bundled here, once per process.
 */
export async function workflowBuild(env: NodeJS.ProcessEnv = process.env): Promise<{ code: string; buildId: string }> {
  const file = workflowBundlePath(env);
  const key = file ?? '(sources)';
  let build = bundles.get(key);
  if (!build) {
    const code = file ? fs.readFileSync(file, 'utf8') : await bundleSources();
    // Bundled here, the code is not byte-stable across processes (the bundler's entry file); the sources it comes from are.
    const hashed = file ? code : workflowSources();
    build = {
      code,
      buildId: env.JUDGEFLOW_BUILD_ID || crypto.createHash('sha256').update(hashed).digest('hex').slice(0, 12),
    };
    bundles.set(key, build);
  }
  return build;
}

/** Every workflows/ and contract/ source file, path and text, in order: what a bundle of the sources is made from. */
function workflowSources(): string {
  const workflows = path.dirname(require.resolve('../workflows'));
  // contract/ (beside workflows/) holds the message definitions and pure helpers the workflows import.
  const dirs = [workflows, path.join(workflows, '..', 'contract')].filter((dir) => fs.existsSync(dir));
  return dirs
    .flatMap((dir) =>
      (fs.readdirSync(dir, { recursive: true }) as string[])
        .filter((f) => /\.[cm]?[jt]s$/.test(f))
        .sort()
        .map((f) => `${path.basename(dir)}/${f}\n${fs.readFileSync(path.join(dir, f), 'utf8')}`),
    )
    .join('\n');
}

async function bundleSources(): Promise<string> {
  const { bundleWorkflowCode } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  const quiet = { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never;
  return (await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: quiet })).code;
}

export const versioningEnabled = (env: NodeJS.ProcessEnv = process.env): boolean =>
  !['0', 'false', 'off'].includes((env.JUDGEFLOW_WORKER_VERSIONING ?? '').toLowerCase());

/** The deployment version of a worker on `taskQueue` running `buildId`. */
export function deploymentVersion(taskQueue: string, buildId: string): WorkerDeploymentVersion {
  return { deploymentName: taskQueue, buildId };
}

/**
 * Make `version` its deployment's current version, so runs started without a pin (detached starts, schedules) go to
 * it. The version exists on the server only once its worker has polled, so this retries (each call bounded) until it
 * succeeds, `withinMs` pass, or `stopped()` says the worker is gone.
 */
export async function makeCurrent(
  connection: Pick<ConnectionLike, 'workflowService' | 'withDeadline'>,
  namespace: string,
  version: WorkerDeploymentVersion,
  stopped: () => boolean,
  withinMs = 60_000,
): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!stopped()) {
    try {
      await connection.withDeadline(Date.now() + 2_000, () =>
        connection.workflowService.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName: version.deploymentName,
          buildId: version.buildId,
          identity: `judgeflow-worker-${process.pid}`,
        }),
      );
      return true;
    } catch (error) {
      // NOT_FOUND until the worker's first poll registered the version.
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return false;
}

/** A pinned start fails with FAILED_PRECONDITION until the worker's first poll has registered its version. */
export function versionNotYetPresent(error: unknown): boolean {
  // The SDK's ServiceError says "Failed to start Workflow"; the server's words are in its cause.
  for (let e = error as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
    if (/Pinned version .* is not present in task queue/.test(e.message ?? '')) return true;
  return false;
}

/** The version a workflow execution is pinned to, from its description; undefined for an unversioned one. */
export function pinnedVersion(raw: {
  workflowExecutionInfo?: {
    versioningInfo?: { deploymentVersion?: { deploymentName?: string | null; buildId?: string | null } | null } | null;
  } | null;
}): WorkerDeploymentVersion | undefined {
  const v = raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion;
  return v?.buildId && v.deploymentName ? { deploymentName: v.deploymentName, buildId: v.buildId } : undefined;
}

/**
 * A run started by a judgeflow before worker versioning (or with JUDGEFLOW_WORKER_VERSIONING=0): its execution has run
 * workflow tasks (a completed first task: 4 events or more) yet is pinned to no version, while this judgeflow's workers
 * are versioned. Today's workflow code cannot be trusted to replay it (TMPRL1100), so `resume` moves it and `status`
 * says so. A run whose first task no worker has taken yet is not pinned either, and is not one of these.
 */
export function startedBeforeVersioning(
  raw: Parameters<typeof pinnedVersion>[0] & { workflowExecutionInfo?: { historyLength?: unknown } | null },
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return versioningEnabled(env) && !pinnedVersion(raw) && Number(raw.workflowExecutionInfo?.historyLength ?? 0) >= 4;
}
