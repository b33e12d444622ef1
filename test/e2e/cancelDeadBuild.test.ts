import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { pinnedVersion } from '../../worker/versioning';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * Cancelling a run pinned to a build no worker serves any more (issue 30, row 22): the cancel can never be carried out
 * by the run's workflow, so `judgeflow cancel` ends it and records it as cancelled, instead of failing with a worker
 * shutdown error.
 */
jest.setTimeout(180_000);

test('judgeflow cancel of a run pinned to a build no worker serves: the run is ended and recorded as cancelled (exit 0)', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  const copilots = await startSimServer({ latencyMs: 100 });
  const root = tempDir('jf-dead-build-');
  // Another build: the same workflow code under another file and build id, as a worker of an older release would be.
  const bundle = path.join(root, 'old-bundle.js');
  fs.copyFileSync(process.env.JUDGEFLOW_WORKFLOW_BUNDLE!, bundle);
  try {
    const config = runConfig(tempDir(), {
      protocol: 'lattice',
      queries: latticeGrid(4, 5),
      judge: { baseURL: judge.url, model: 'sim-judge' },
      copilots: simCopilots(copilots.url, { Good: 'sim-terse' }).map((c) => ({ ...c, concurrency: 1 })),
    });
    const runId = `run-dead-build-${Date.now()}`;
    const old = await withWorker(
      'dead-build',
      async (world) => {
        const handle = await world.client.workflow.start(benchmarkRun, {
          taskQueue: world.taskQueue,
          workflowId: runId,
          args: [runInput(config, runId)],
        });
        await until(async () => (await world.store.responses(runId)).length >= 2, 60_000);
        expect(pinnedVersion((await handle.describe()).raw as never)?.buildId).toBe('oldbuild0001');
        return { taskQueue: world.taskQueue, storeFile: world.storeFile };
      },
      { ...process.env, JUDGEFLOW_WORKFLOW_BUNDLE: bundle, JUDGEFLOW_BUILD_ID: 'oldbuild0001' },
    );
    // Its worker has stopped; this checkout's build is another.
    const env = { JUDGEFLOW_STORE: old.storeFile, JUDGEFLOW_TASK_QUEUE: old.taskQueue };
    const cancelled = await cliInProcess(['cancel', runId], env);
    expect(cancelled.stderr).not.toContain('Promise did not resolve');
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(
      `Run ${runId} is pinned to build oldbuild0001, which no running worker serves: ended it; it is recorded as failed (cancelled`,
    );
    const status = JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout);
    expect(status).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^cancelled \(judgeflow cancel; no worker of build oldbuild0001/),
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
