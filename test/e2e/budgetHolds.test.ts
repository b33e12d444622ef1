import { runInput } from '../../client/startRun';
import { dryRunPlan } from '../../client/dryRun';
import { callCostUsd, summariseCost } from '../../core/stats/cost';
import type { LlmCallRecord } from '../../core/model/types';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker, type TestWorld } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * Budgets that hold (issue 30, rows 1, 2 and 5): a panel's members priced by model in dry-run, budget and report; a
 * budget given by `resume --budget-usd` to a run started without one; and the overshoot of a pause bounded by the
 * calls in flight when it is recorded, items batched several per activity included.
 */
jest.setTimeout(240_000);

const envOf = (world: TestWorld) => ({
  JUDGEFLOW_HOME: world.dir,
  JUDGEFLOW_STORE: world.storeFile,
  JUDGEFLOW_TASK_QUEUE: world.taskQueue,
});
const statusOf = async (world: TestWorld, runId: string) =>
  JSON.parse((await cliInProcess(['status', runId, '--json'], envOf(world))).stdout);
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every request the servers got since `marks`, and the spend of the run's recorded calls as the report prices them. */
async function settled(world: TestWorld, runId: string, copilots: string[], pricing: Record<string, unknown>) {
  const calls = await world.store.llmCalls(runId);
  const cost = summariseCost(calls, copilots, pricing as never);
  const prices = calls.map((c: LlmCallRecord) => callCostUsd(pricing as never, c) ?? 0);
  return { calls, cost, maxCallUsd: Math.max(0, ...prices) };
}

test('a panel under budget.usd: each member priced by its model (not its name) in dry-run, the budget and the report; the run pauses at the cap within the calls in flight', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 80 });
  const copilots = await startSimServer({ latencyMs: 60 });
  try {
    await withWorker('budget-panel', async (world) => {
      // Copilots free, judges dear: only the panel's calls can reach the cap (before the fix they cost null).
      const pricing = {
        'sim-terse': { inputPerMTok: 0, outputPerMTok: 0 },
        'panel-a-model': { inputPerMTok: 200, outputPerMTok: 400 },
        'panel-b-model': { inputPerMTok: 300, outputPerMTok: 600 },
      };
      const cap = 0.6;
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(4, 5),
        judges: [
          { name: 'alpha', baseURL: judge.url, model: 'panel-a-model', concurrency: 2 },
          { name: 'beta', baseURL: judge.url, model: 'panel-b-model', concurrency: 2 },
        ],
        copilots: simCopilots(copilots.url, { A: 'sim-terse' }).map((c) => ({ ...c, concurrency: 2 })),
        pricing,
        budget: { usd: cap },
      });
      const plan = dryRunPlan(config);
      for (const member of ['alpha', 'beta'])
        expect(plan.endpoints.find((e) => e.role === 'judge' && e.name === member)?.estimatedCostUsd).toBeGreaterThan(
          0,
        );
      expect(plan.budget?.verdict).toBe('over');

      const runId = `run-budget-panel-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => (await statusOf(world, runId)).status === 'paused', 90_000);
      const paused = await statusOf(world, runId);
      expect(paused.paused).toMatchObject({ reason: 'budget', by: 'budget', budgetUsd: cap });
      await wait(3_000); // the calls in flight finish
      const { cost, maxCallUsd } = await settled(world, runId, ['A'], pricing);
      expect(cost.judge.alpha.estimatedCostUsd).toBeGreaterThan(0);
      expect(cost.judge.beta.estimatedCostUsd).toBeGreaterThan(0);
      // The budget saw what the report prices: the same figure.
      expect(paused.paused.spentUsd).toBeGreaterThanOrEqual(cap);
      const window = 2 + 2 + 2;
      expect(cost.total.estimatedCostUsd!).toBeLessThanOrEqual(cap + 2 * window * maxCallUsd + 1e-9);
      expect((await world.store.judgments(runId)).length).toBeLessThan(40);
      await handle.cancel();
      await handle.result().catch(() => undefined);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('pause, then resume --budget-usd on a run started without a budget: the cap holds from then on, status and history show it, and a raised cap drops the stale warning', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 80 });
  const copilots = await startSimServer({ latencyMs: 120 });
  try {
    await withWorker('budget-on-resume', async (world) => {
      const env = envOf(world);
      const pricing = {
        'sim-judge': { inputPerMTok: 200, outputPerMTok: 400 },
        'sim-terse': { inputPerMTok: 100, outputPerMTok: 200 },
      };
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(8, 5),
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 2 },
        copilots: simCopilots(copilots.url, { A: 'sim-terse' }).map((c) => ({ ...c, concurrency: 2 })),
        pricing,
      });
      const runId = `run-budget-on-resume-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => (await world.store.llmCalls(runId)).length >= 4, 60_000);
      expect((await cliInProcess(['pause', runId], env)).code).toBe(0);
      await wait(2_000);
      const spentBefore = (await settled(world, runId, ['A'], pricing)).cost.total.estimatedCostUsd!;
      const cap = Number((spentBefore + 0.4).toFixed(4));
      const resumed = await cliInProcess(['resume', runId, '--budget-usd', String(cap)], env);
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);

      await until(async () => (await statusOf(world, runId)).status === 'paused', 90_000);
      const paused = await statusOf(world, runId);
      expect(paused.paused).toMatchObject({ reason: 'budget', by: 'budget', budgetUsd: cap });
      expect(paused.budget).toEqual({ usd: cap });
      const resume = paused.history.find((h: { action: string }) => h.action === 'resume');
      expect(resume).toMatchObject({ budget: { usd: cap } });
      expect(resume.reason).toContain(`budget now $${cap}`);
      expect(paused.warnings.join(' ')).toContain(`of the $${cap} budget`);
      await wait(3_000);
      const { cost, maxCallUsd } = await settled(world, runId, ['A'], pricing);
      expect(cost.total.estimatedCostUsd!).toBeLessThanOrEqual(cap + 2 * 4 * maxCallUsd + 1e-9);

      // A higher cap: the warning about the old one is gone from status (the history keeps the cap it had).
      expect((await cliInProcess(['resume', runId, '--budget-usd', '1000'], env)).code).toBe(0);
      const after = await statusOf(world, runId);
      expect((after.warnings ?? []).join(' ')).not.toContain(`of the $${cap} budget`);
      expect(after.budget).toEqual({ usd: 1000 });
      const result = (await handle.result()) as RunResult;
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('overshoot bound: a judge and a copilot without usage (estimated), items batched several per activity: once the pause is recorded no new call starts, and the spend stays within the cap plus the calls in flight', async () => {
  // 300 ms a call: items are asked several per activity (up to 2 s of calls), so a batch that went on after the
  // pause would send calls well after it.
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 300 });
  const copilots = await startSimServer({ latencyMs: 300 });
  try {
    await withWorker('budget-bound', async (world) => {
      const pricing = {
        'sim-judge': { inputPerMTok: 100, outputPerMTok: 200 },
        Web: { inputPerMTok: 100, outputPerMTok: 200 },
      };
      // A streamed reply without stream_options.include_usage carries no usage: the copilot's calls are estimated.
      const web = {
        name: 'Web',
        type: 'http',
        url: `${copilots.url}/chat/completions`,
        body: { model: 'sim-thorough', messages: [{ role: 'user', content: '{{query}}' }], stream: true },
        stream: 'sse',
        chunkPath: 'choices[0].delta.content',
        concurrency: 2,
      };
      const cap = 0.5;
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(16, 5),
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 2 },
        copilots: [web],
        pricing,
        budget: { usd: cap },
      });
      const runId = `run-budget-bound-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => (await statusOf(world, runId)).status === 'paused', 120_000);
      const paused = await statusOf(world, runId);
      expect(paused.paused).toMatchObject({ reason: 'budget', by: 'budget', budgetUsd: cap });
      await wait(4_000);
      const pausedAt = Date.parse(paused.paused.at);
      const late = [...judge.requests, ...copilots.requests].filter((r) => r.at > pausedAt + 700);
      expect(late.map((r) => `${r.path} +${r.at - pausedAt} ms`)).toEqual([]);
      const { cost, calls, maxCallUsd } = await settled(world, runId, ['Web'], pricing);
      expect(calls.filter((c) => c.name === 'Web').some((c) => c.promptTokens === null)).toBe(true);
      // The calls in flight when the pause was recorded, and those that finished while the look read the spend: each at
      // most a window (the endpoints' concurrencies).
      const window = 2 + 2;
      expect(cost.total.estimatedCostUsd!).toBeLessThanOrEqual(cap + 2 * window * maxCallUsd + 1e-9);
      // Held: nothing more while paused.
      const quiet = judge.requests.length + copilots.requests.length;
      await wait(3_000);
      expect(judge.requests.length + copilots.requests.length).toBe(quiet);
      await handle.cancel();
      await handle.result().catch(() => undefined);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
