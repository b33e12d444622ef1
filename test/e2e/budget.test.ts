import fs from 'node:fs';
import { runInput } from '../../client/startRun';
import { parseRunConfig } from '../../client/config';
import { dryRunPlan } from '../../client/dryRun';
import { summariseCost } from '../../core/stats/cost';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import { progressQuery } from '../../contract/control';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * A budget: a run whose whole cost would be C, capped at C/2, pauses at the cap (status paused, reason budget) and makes
 * no call while paused; `judgeflow resume RUN_ID --budget-usd 3C` completes it with every item ok and nothing asked
 * twice. Costs are what the endpoints' usage reported, priced by `pricing`.
 */
jest.setTimeout(240_000);

const pricing = {
  'sim-judge': { inputPerMTok: 2, outputPerMTok: 8 },
  'sim-thorough': { inputPerMTok: 1, outputPerMTok: 4 },
  'sim-terse': { inputPerMTok: 1, outputPerMTok: 4 },
};

test('a run capped at half its cost pauses at the budget, stays quiet, and completes after resume --budget-usd with nothing asked twice', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 60 });
  const copilots = await startSimServer({ latencyMs: 120 });
  try {
    await withWorker('budget', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const fields = {
        protocol: 'lattice',
        queries: latticeGrid(4, 5), // 20 queries × 2 copilots: 40 answers, 40 judgments
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 2 },
        copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }).map((c) => ({
          ...c,
          concurrency: 2,
        })),
        pricing,
      };
      // The whole run's cost C, measured: the same run without a budget.
      const full = (await world.client.workflow.execute(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: `budget-full-${Date.now()}`,
        args: [runInput(runConfig(tempDir(), fields), `budget-full-${Date.now()}`)],
      })) as RunResult;
      const C = JSON.parse(fs.readFileSync(full.reportPath, 'utf8')).cost.total.estimatedCostUsd as number;
      expect(C).toBeGreaterThan(0);

      const config = runConfig(tempDir(), { ...fields, budget: { usd: C / 2 } });
      expect(dryRunPlan(config).budget).toMatchObject({ usd: C / 2 });
      const marks = { copilots: copilots.requests.length, judge: judge.requests.length };
      const runId = `run-budget-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });

      const statusOf = async () => JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout);
      await until(async () => (await statusOf()).status === 'paused', 60_000);
      const paused = await statusOf();
      expect(paused.paused).toMatchObject({ reason: 'budget', by: 'budget', budgetUsd: C / 2 });
      expect(paused.paused.spentUsd).toBeGreaterThanOrEqual(C / 2);
      expect(paused.warnings.join(' ')).toMatch(/80% of the budget reached|budget reached, paused at/);
      // In flight calls finish (waited for as the run counts them, not for a fixed 1.5 s that a call dispatched late under
      // load outlasts); then nothing for ten seconds.
      await until(async () => {
        const progress = await handle.query(progressQuery);
        return !progress.paused || progress.callsInFlight === 0;
      }, 60_000);
      const quiet = { copilots: copilots.requests.length, judge: judge.requests.length };
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      expect({ copilots: copilots.requests.length, judge: judge.requests.length }).toEqual(quiet);
      expect(quiet.copilots - marks.copilots + quiet.judge - marks.judge).toBeLessThan(80);

      // Resuming at the same cap would pause at once: refused, with what to do.
      const same = await cliInProcess(['resume', runId], env);
      expect(same.code).toBe(2);
      expect(same.stderr).toMatch(/paused at its budget: \$[\d.]+ spent of \$[\d.]+; raise it/);
      const resumed = await cliInProcess(['resume', runId, '--budget-usd', String(3 * C)], env);
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      const result = (await handle.result()) as RunResult;
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect((await world.store.responses(runId)).filter((r) => r.status === 'ok')).toHaveLength(40);
      expect((await world.store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(40);
      // Nothing asked twice across the pause.
      expect(copilots.requests.length - marks.copilots).toBe(40);
      expect(judge.requests.length - marks.judge).toBe(40);
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.control.budget).toEqual({ usd: 3 * C });
      expect(report.control.history.map((h: { action: string; by: string }) => `${h.action}:${h.by}`)).toEqual([
        'pause:budget',
        'resume:user',
      ]);
      expect(fs.readFileSync(result.reportPath.replace(/report\.json$/, 'report.md'), 'utf8')).toContain(
        '## Pauses and budget',
      );
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('a copilot that reports no usage counts against a token budget, estimated from its request and reply size, and status says how many calls were estimated', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 60 });
  const copilots = await startSimServer({ latencyMs: 120 });
  try {
    await withWorker('budget-no-usage', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      // A streamed reply without stream_options.include_usage carries no usage (sim/server.ts).
      const web = {
        name: 'Web',
        type: 'http',
        url: `${copilots.url}/chat/completions`,
        body: { model: 'sim-thorough', messages: [{ role: 'user', content: '{{query}}' }], stream: true },
        stream: 'sse',
        chunkPath: 'choices[0].delta.content',
        concurrency: 2,
      };
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(4, 5),
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 1 },
        copilots: [web],
        budget: { tokens: 200 },
      });
      const runId = `run-budget-no-usage-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      const statusOf = async () => cliInProcess(['status', runId, '--json'], env);
      await until(async () => JSON.parse((await statusOf()).stdout).status === 'paused', 60_000);
      const status = JSON.parse((await statusOf()).stdout);
      expect(status.paused).toMatchObject({ reason: 'budget', budgetTokens: 200 });
      const calls = await world.store.llmCalls(runId);
      const web_ = calls.filter((c) => c.name === 'Web');
      expect(web_.length).toBeGreaterThan(0);
      expect(
        web_.every(
          (c) =>
            c.promptTokens === null &&
            c.completionTokens === null &&
            (c.requestChars ?? 0) > 0 &&
            (c.replyChars ?? 0) > 0,
        ),
      ).toBe(true);
      // What the budget saw includes the copilot's estimated tokens, counted as the cost table counts them.
      const webTokens = summariseCost(web_, ['Web'], undefined).copilots.Web;
      expect(webTokens.promptTokens + webTokens.completionTokens).toBeGreaterThan(0);
      expect(status.spent.callsEstimated).toBeGreaterThan(0);
      expect(status.spent.callsEstimated).toBeLessThanOrEqual(web_.length);
      expect(status.paused.spentTokens).toBeGreaterThanOrEqual(200);
      const text = await cliInProcess(['status', runId], env);
      expect(text.stdout).toMatch(
        /Spent so far: \d+ tokens \(\d+ call\(s\) reported no usage and are estimated from their request and reply size\)/,
      );
      await handle.cancel();
      await handle.result().catch(() => undefined);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('a USD budget without a price for some endpoint is an input error naming it', () => {
  expect(() =>
    parseRunConfig(
      {
        protocol: 'lattice',
        queries: 'q.jsonl',
        judge: { baseURL: 'http://127.0.0.1:1/v1', model: 'sim-judge' },
        copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:1/v1', model: 'sim-terse' }],
        pricing: { 'sim-judge': { inputPerMTok: 1, outputPerMTok: 1 } },
        budget: { usd: 5 },
      },
      'budget.yaml',
      tempDir(),
    ),
  ).toThrow(/budget\.usd.*copilot A \(model sim-terse\) has none: add pricing/s);
});
