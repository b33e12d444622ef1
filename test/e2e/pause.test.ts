import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import { progressQuery } from '../../contract/control';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * `judgeflow pause` / `judgeflow resume` on a running run (Temporal Updates): while paused no copilot or judge call
 * starts; once resumed the run completes with every item asked exactly once.
 */
jest.setTimeout(180_000);

test('pause leaves a running run quiet (status says paused, with the reason), a second pause is refused, resume completes it with nothing asked twice', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 100 });
  const copilots = await startSimServer({ latencyMs: 250 });
  try {
    await withWorker('pause', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(4, 5), // 20 queries × 2 copilots: 40 answers, 40 judgments
        judge: { baseURL: judge.url, model: 'judge', concurrency: 2 },
        copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }).map((c) => ({
          ...c,
          concurrency: 2,
        })),
      });
      const runId = `run-pause-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => (await world.store.responses(runId)).length >= 6, 60_000);

      const paused = await cliInProcess(['pause', runId, '--reason', 'checking the spend'], env);
      expect(paused.stderr).toBe('');
      expect(paused.code).toBe(0);
      expect(paused.stdout).toContain('is paused (checking the spend)');
      // Calls in flight finish (at most 4 copilot calls and 2 judge calls): waited for as the run counts them, not for a
      // fixed 1.5 s that a call dispatched late under load outlasts; then nothing starts.
      await until(async () => {
        const progress = await handle.query(progressQuery);
        return !progress.paused || progress.callsInFlight === 0;
      }, 60_000);
      const quiet = { copilots: copilots.requests.length, judge: judge.requests.length };
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect({ copilots: copilots.requests.length, judge: judge.requests.length }).toEqual(quiet);
      expect(quiet.copilots).toBeLessThan(40);

      const status = await cliInProcess(['status', runId, '--json'], env);
      expect(JSON.parse(status.stdout)).toMatchObject({
        runId,
        status: 'paused',
        paused: { reason: 'checking the spend', by: 'user' },
      });
      const again = await cliInProcess(['pause', runId], env);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/was not paused: the run is already paused \(checking the spend/);

      const resumed = await cliInProcess(['resume', runId], env);
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toMatch(/resumed \(it was paused: checking the spend\)/);
      const result = (await handle.result()) as RunResult;
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect(await world.store.responses(runId)).toHaveLength(40);
      expect(await world.store.judgments(runId)).toHaveLength(40);
      // Nothing was asked twice across the pause.
      expect(copilots.requests.length).toBe(40);
      expect(judge.requests.length).toBe(40);
      const notResumable = await cliInProcess(['pause', runId], env);
      expect(notResumable.code).toBe(2); // a finished run cannot be paused
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
