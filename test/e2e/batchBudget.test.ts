import { runInput } from '../../client/startRun';
import { callCostUsd, summariseCost } from '../../core/stats/cost';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/** Batch judging under a budget (issue 30, row 3): each round sized to what is left, and a pause holds the rounds. */
jest.setTimeout(240_000);

const batchLines = (sim: SimServer, from = 0) => sim.requests.slice(from).filter((r) => r.batch);
const live = (sim: SimServer, from = 0) =>
  sim.requests.slice(from).filter((r) => !r.batch && r.path === '/v1/chat/completions');
const simBatches = async (sim: SimServer) =>
  (
    (await (await fetch(`${sim.url}/batches?limit=100`)).json()) as {
      data: Array<{ id: string; request_counts: { total: number } }>;
    }
  ).data;

test('judge.batch with budget.usd: a round holds only the lines the budget left pays for, the run pauses before a round over it, and resumes to every line asked once', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, batchSeconds: 1 });
  const copilots = await startSimServer({});
  try {
    await withWorker('batch-budget', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      // Copilots free: only the batch lines spend the budget (half of 200/400 per MTok).
      const pricing = {
        'sim-judge': { inputPerMTok: 200, outputPerMTok: 400 },
        'sim-terse': { inputPerMTok: 0, outputPerMTok: 0 },
        'sim-thorough': { inputPerMTok: 0, outputPerMTok: 0 },
      };
      const cap = 0.6;
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(4, 5), // 40 lines
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 4, batch: true, batchPollSeconds: 1 },
        copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }),
        pricing,
        budget: { usd: cap },
      });
      const runId = `run-batch-budget-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      const statusOf = async () => JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout);
      await until(async () => (await statusOf()).status === 'paused', 120_000);
      const paused = await statusOf();
      expect(paused.paused).toMatchObject({ reason: 'budget', by: 'budget', budgetUsd: cap });
      const submitted = (await simBatches(judge)).reduce((n, b) => n + b.request_counts.total, 0);
      expect(submitted).toBeGreaterThan(0);
      expect(submitted).toBeLessThan(40);
      // Held: no new round while paused.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const batchesWhilePaused = (await simBatches(judge)).length;
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect((await simBatches(judge)).length).toBe(batchesWhilePaused);
      const calls = await world.store.llmCalls(runId);
      const spent = summariseCost(calls, ['A', 'B'], pricing).total.estimatedCostUsd!;
      const dearest = Math.max(...calls.map((c) => callCostUsd(pricing, c) ?? 0));
      // Sized before submit: the spend stays within the cap but for the estimate's error on one line.
      expect(spent).toBeLessThanOrEqual(cap + dearest);
      expect(live(judge)).toHaveLength(0);

      expect((await cliInProcess(['resume', runId, '--budget-usd', '100'], env)).code).toBe(0);
      const result = (await handle.result()) as RunResult;
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect((await world.store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(40);
      expect(batchLines(judge)).toHaveLength(40); // every line asked once, across the rounds
      expect(live(judge)).toHaveLength(0);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
