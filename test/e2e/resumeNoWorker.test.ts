import { runInput } from '../../client/startRun';
import { connectClient } from '../../client/connection';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * `judgeflow resume RUN_ID --budget-usd N` on a run paused at its budget whose worker has stopped: no worker answers the
 * run's query, so whether it is paused is unknown; the command says the run did not answer and to start a worker, and
 * exits non-zero, instead of guessing "not paused".
 */
jest.setTimeout(180_000);

const pricing = {
  'sim-judge': { inputPerMTok: 2, outputPerMTok: 8 },
  'sim-thorough': { inputPerMTok: 1, outputPerMTok: 4 },
  'sim-terse': { inputPerMTok: 1, outputPerMTok: 4 },
};

test('resume --budget-usd of a paused run with no worker left: "did not answer", start a worker, exit 2', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 60 });
  const copilots = await startSimServer({ latencyMs: 60 });
  const runId = `run-resume-no-worker-${Date.now()}`;
  let env: Record<string, string> = {};
  try {
    await withWorker('resume-no-worker', async (world) => {
      env = { JUDGEFLOW_HOME: world.dir, JUDGEFLOW_STORE: world.storeFile, JUDGEFLOW_TASK_QUEUE: world.taskQueue };
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(2, 5),
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 1 },
        copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }),
        pricing,
        budget: { usd: 0.000001 }, // the first call's cost reaches it: the run pauses at once
      });
      await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(
        async () => JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout).status === 'paused',
        60_000,
      );
    });
    // The worker has stopped (withWorker returned); the run is still open in Temporal, paused.
    const resumed = await cliInProcess(['resume', runId, '--budget-usd', '100'], env);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain(`run ${runId} did not answer (`);
    expect(resumed.stderr).toMatch(
      /no worker seems to serve its task queue \S+; start one \(judgeflow worker\) and run this command again/,
    );
    expect(resumed.stderr).not.toMatch(/is not paused/);
  } finally {
    const client = await connectClient();
    await client.workflow
      .getHandle(runId)
      .terminate('test over')
      .catch(() => undefined);
    await client.connection.close();
    await judge.close();
    await copilots.close();
  }
});
