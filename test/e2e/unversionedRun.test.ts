import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { pauseUpdate } from '../../contract/control';
import { pinnedVersion } from '../../worker/versioning';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * The upgrade from a release without worker versioning (issue 30, row 9): a run started by an unversioned worker (a
 * worker without deployment options, as that release ran) is recognised by `status`, and `judgeflow resume` moves it
 * to today's versioned build from the results store — no --force, no nondeterminism error.
 */
jest.setTimeout(240_000);

test('a run in flight on an unversioned worker: status says to resume it, and resume moves it to this build, where it completes', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  const copilots = await startSimServer({ latencyMs: 50 });
  try {
    const config = runConfig(tempDir(), {
      protocol: 'lattice',
      queries: latticeGrid(2, 5),
      judge: { baseURL: judge.url, model: 'sim-judge' },
      copilots: simCopilots(copilots.url, { Good: 'sim-terse' }).map((c) => ({ ...c, concurrency: 1 })),
    });
    const runId = `run-unversioned-${Date.now()}`;
    // The previous release: its worker has no deployment, so the run it starts is pinned to nothing.
    const old = await withWorker(
      'unversioned',
      async (world) => {
        const handle = await world.client.workflow.start(benchmarkRun, {
          taskQueue: world.taskQueue,
          workflowId: runId,
          args: [runInput(config, runId)],
        });
        await until(async () => (await world.store.responses(runId)).length >= 2, 60_000);
        await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'upgrading' }] });
        expect(pinnedVersion((await handle.describe()).raw as never)).toBeUndefined();
        return {
          taskQueue: world.taskQueue,
          storeFile: world.storeFile,
          dir: world.dir,
          firstRunId: (await handle.describe()).runId,
        };
      },
      { ...process.env, JUDGEFLOW_WORKER_VERSIONING: '0' },
    );
    // Today's release: versioned workers. The CLI's own worker (run in this process by resume) is one.
    const env = { JUDGEFLOW_HOME: old.dir, JUDGEFLOW_STORE: old.storeFile, JUDGEFLOW_TASK_QUEUE: old.taskQueue };
    const status = await cliInProcess(['status', runId, '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({
      status: 'running',
      upgrade: `run ${runId} was started by a judgeflow release before worker versioning; continue it on this build with: judgeflow resume ${runId}`,
    });

    const resumed = await cliInProcess(['resume', runId], env);
    expect(resumed.stderr).not.toMatch(/TMPRL1100|[Nn]ondeterminism/);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('was started by a judgeflow release before worker versioning');
    expect(resumed.stdout).toMatch(/Run run-unversioned-\d+ completed on build \w+/);
    await withWorker('unversioned-check', async (world) => {
      const first = await world.client.workflow.getHandle(runId, old.firstRunId).describe();
      expect(first.status.name).toBe('TERMINATED');
      const latest = await world.client.workflow.getHandle(runId).describe();
      expect(latest.status.name).toBe('COMPLETED');
      expect(pinnedVersion(latest.raw as never)).toBeDefined();
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
