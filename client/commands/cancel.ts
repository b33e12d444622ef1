import type { WorkflowHandle } from '@temporalio/client';
import { describeRun } from './status';
import { closeSharedBrowser } from '../../activities/adapters/browser';
import { InputError } from '../../core/model/inputError';
import { createWorker } from '../../worker/createWorker';
import { pinnedVersion, startedBeforeVersioning, workflowBuild } from '../../worker/versioning';
import { openExistingStore } from '../../stores';
import type { Command } from '../args';
import { connectWorker, taskQueue } from '../connection';
import { withClient } from '../runWorkflow';
import { ensureLocalServer } from '../temporalServer';

/** How long the run's workflow may take to carry the cancel out (record the run as failed, close its children). */
const CANCEL_TIMEOUT_MS = 60_000;

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'cancel a run: its copilot and judge calls stop within seconds and it is recorded as failed (cancelled)',
  usage: 'judgeflow cancel RUN_ID',
  async run({ positionals }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${this.usage}`);
    await ensureLocalServer({ log: console.log });
    return withClient(async (client) => {
      const handle = client.workflow.getHandle(runId);
      const description = await describeRun(handle, runId);
      if (description.status.name !== 'RUNNING') {
        console.log(`Run ${runId} is already ${description.status.name.toLowerCase()}; nothing to cancel.`);
        return 0;
      }
      await handle.cancel();
      console.log(`Cancellation of ${runId} requested.`);
      // The run's own workflow carries the cancel out, so it needs a worker: another one may be running; if none
      // picks it up quickly (e.g. after Ctrl-C on judgeflow run), run one here until the run has closed.
      let closed = await closedWithin(handle, 3_000);
      const pinned = pinnedVersion(description.raw as never);
      const ours = (await workflowBuild()).buildId;
      const elsewhere = (pinned && pinned.buildId !== ours) || startedBeforeVersioning(description.raw as never);
      if (!closed && elsewhere) {
        // Pinned to another build: a worker of this one never gets its tasks. A live worker of that build carries the
        // cancel out within seconds; when none does, the run is ended here and recorded as cancelled.
        closed = await closedWithin(handle, OTHER_BUILD_WAIT_MS);
        if (!closed) return terminateUnserved(handle, runId, pinned?.buildId ?? 'unversioned');
      }
      if (!closed && description.taskQueue === (await taskQueue()))
        closed = await withLocalWorker(() => closedWithin(handle, CANCEL_TIMEOUT_MS)).catch(() =>
          closedWithin(handle, 0),
        );
      if (!closed) {
        console.log(
          `It takes effect when a worker for this run is running: judgeflow worker (with task queue ${description.taskQueue}).`,
        );
        return 1;
      }
      console.log(
        `Run ${runId} is ${(await handle.describe()).status.name.toLowerCase()}; it is recorded as failed (cancelled). Its stored responses and judgments are kept.`,
      );
      return 0;
    });
  },
};

/** How long a run on another build is given to carry a cancel out before it is ended without its workflow. */
const OTHER_BUILD_WAIT_MS = 15_000;

/** No worker serves the run's build: end its execution, and record in the store that it was cancelled (and why). */
async function terminateUnserved(handle: WorkflowHandle, runId: string, buildId: string): Promise<number> {
  const reason = `cancelled (judgeflow cancel; no worker of build ${buildId} carried it out, so the run was ended without its workflow)`;
  await handle.terminate(reason);
  const store = await openExistingStore();
  if (store && (await store.getRun(runId))?.status === 'running')
    await store.finishRun(runId, 'failed', null, { error: reason }, new Date().toISOString());
  console.log(
    `Run ${runId} is pinned to build ${buildId}, which no running worker serves: ended it; it is recorded as failed (${reason}). Its stored responses and judgments are kept.`,
  );
  return 0;
}

/**
 * Polls the run's state rather than racing `handle.result()` against a timer: a result long-poll left behind when the
 * timer wins keeps retrying on the connection after withClient closes it (grpc-js throws "Channel has been shut down"
 * from a timer, and a test process never exits).
 */
async function closedWithin(handle: WorkflowHandle, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if ((await handle.describe()).status.name !== 'RUNNING') return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function withLocalWorker<T>(fn: () => Promise<T>): Promise<T> {
  const { connection, namespace } = await connectWorker();
  const worker = await createWorker({ connection, namespace, taskQueue: await taskQueue() });
  try {
    return await worker.runUntil(fn());
  } finally {
    await closeSharedBrowser();
    await connection.close();
  }
}
