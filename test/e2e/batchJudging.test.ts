import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import { cliInProcess } from '../support/cliInProcess';
import { killableWorker } from '../support/cli';
import {
  latticeGrid,
  runConfig,
  simCopilots,
  tempDir,
  uniqueQueue,
  until,
  withWorker,
  writeQueries,
} from '../support/harness';
import { scriptedLatticeJudge, scriptedScore } from '../support/judges';
import { firstFavouringJudge } from '../support/cabJudge';

/**
 * Batch judging (`judge.batch`) against the simulator's OpenAI Batch API and Anthropic Message Batches: every judgment
 * from a batch and none asked live, a worker killed while the batch waits loses nothing and submits nothing twice, the
 * judge's cost is half of the same run judged live, failed lines are asked live, `cancel` cancels the batch, and
 * CryptoAnalystBench goes turn by turn across queries.
 */
jest.setTimeout(240_000);

const pricing = { 'sim-judge': { inputPerMTok: 2, outputPerMTok: 8 } };
const live = (sim: SimServer, from = 0) =>
  sim.requests.slice(from).filter((r) => !r.batch && (r.path === '/v1/chat/completions' || r.path === '/v1/messages'));
const batchLines = (sim: SimServer, from = 0) => sim.requests.slice(from).filter((r) => r.batch);
const simBatches = async (sim: SimServer) =>
  ((await (await fetch(`${sim.url}/batches?limit=100`)).json()) as { data: Array<{ id: string; status: string }> })
    .data;

test('a LATTICE run judged in one batch: worker SIGKILLed while the batch waits, every judgment from the batch, one batch submitted, judge cost half of live', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, batchSeconds: 10 });
  const copilots = await startSimServer({});
  const dir = tempDir();
  const home = path.join(dir, 'home');
  const fields = {
    protocol: 'lattice',
    queries: latticeGrid(4, 5),
    judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 4 },
    copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }),
    pricing,
  };
  const world = await killableWorker(home, uniqueQueue('batch-kill'));
  const { env, client, store } = world;
  try {
    const liveId = `run-live-${Date.now()}`;
    const liveRun = (await client.workflow.execute(benchmarkRun, {
      taskQueue: env.JUDGEFLOW_TASK_QUEUE,
      workflowId: liveId,
      args: [runInput(runConfig(dir, fields), liveId)],
    })) as RunResult;
    const liveCost = JSON.parse(fs.readFileSync(liveRun.reportPath, 'utf8')).cost.judge['sim-judge'];
    expect(liveCost.batchCalls).toBe(0);

    const mark = judge.requests.length;
    const runId = `run-batch-${Date.now()}`;
    const config = runConfig(tempDir(), { ...fields, judge: { ...fields.judge, batch: true, batchPollSeconds: 2 } });
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue: env.JUDGEFLOW_TASK_QUEUE,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    const statusOf = async () => JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout);
    // Submitted and polled once (the workflow shows what its last poll said), still waiting at the provider.
    await until(
      async () =>
        Object.values((await statusOf()).batches ?? {}).some((lane: any) =>
          lane.batches.some((b: any) => b.batchId && !b.ended),
        ),
      90_000,
    );
    const status = await statusOf();
    expect(Object.values(status.batches ?? {})).toEqual([
      expect.objectContaining({
        round: 1,
        batches: [expect.objectContaining({ lines: 40, batchId: expect.stringMatching(/^batch_/), ended: false })],
      }),
    ]);
    expect((await cliInProcess(['status', runId], env)).stdout).toMatch(
      /Batch API judging by the judge: batch round 1\n  batch_\S+: (validating|in_progress), \d+\/40 done/,
    );
    await world.kill();
    expect(await store.judgments(runId)).toHaveLength(0); // killed while the batch waited: nothing judged yet
    await new Promise((r) => setTimeout(r, 3_000)); // the batch goes on at the provider; the run waits on its timer
    world.restart();
    const result = (await handle.result()) as RunResult;

    expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
    // Complete: no batch round is open any more, only how many ran (the second asked the items again, answered from
    // the first's results, and submitted nothing).
    const after = (await cliInProcess(['status', runId], env)).stdout;
    expect(after).toMatch(/^Batch API judging by the judge: 2 batch round\(s\) finished, none open$/m);
    expect(after).not.toMatch(/batch round \d|batch_\S+:/);
    const judgments = await store.judgments(runId);
    expect(judgments.filter((j) => j.status === 'ok')).toHaveLength(40);
    const texts = new Map((await store.responses(runId)).map((r) => [`${r.queryId}/${r.copilot}`, r.text!]));
    for (const j of judgments)
      for (const [dim, score] of Object.entries(j.scores!))
        expect(score).toBe(scriptedScore(texts.get(`${j.queryId}/${j.copilot}`)!, dim));
    expect(live(judge, mark)).toHaveLength(0); // no live judge call
    expect(batchLines(judge, mark)).toHaveLength(40); // each line answered once
    expect(await simBatches(judge)).toHaveLength(1); // submitted once, across the kill
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    expect(report.cost.judge['sim-judge']).toMatchObject({
      calls: 40,
      batchCalls: 40,
      promptTokens: liveCost.promptTokens,
      completionTokens: liveCost.completionTokens,
    });
    expect(report.cost.judge['sim-judge'].estimatedCostUsd).toBeCloseTo(liveCost.estimatedCostUsd / 2, 10);
    expect(report.batches).toEqual([expect.objectContaining({ api: 'openai', state: 'completed', lines: 40 })]);
  } finally {
    await world.close();
    await judge.close();
    await copilots.close();
  }
});

test('lines that fail in the batch, or that it left when it expired, are asked live, once each; every item ends ok', async () => {
  const judge = await startSimServer({
    handler: scriptedLatticeJudge,
    batchSeconds: 0.5,
    batchFailLines: 4,
    batchExpireAfterLines: 32,
  });
  const copilots = await startSimServer({});
  try {
    await withWorker('batch-fail', async ({ client, taskQueue, store }) => {
      const runId = `run-batch-fail-${Date.now()}`;
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(4, 5),
        judge: { baseURL: judge.url, model: 'sim-judge', batch: true, batchPollSeconds: 1 },
        copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }),
      });
      const result = (await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      })) as RunResult;
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect((await store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(40);
      const failedLines = (await store.batchLines(runId, (await store.judgeBatches(runId))[0].key)).filter(
        (l) => l.status !== 'ok',
      );
      // Of the 32 lines processed every 4th failed (8); the last 8 expired with the batch.
      expect(failedLines.map((l) => l.status).sort()).toEqual([
        ...Array(8).fill('errored'),
        ...Array(8).fill('expired'),
      ]);
      expect(live(judge)).toHaveLength(16);
      expect(new Set(live(judge).map((r) => JSON.stringify(r.body.messages))).size).toBe(16);
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.cost.judge['sim-judge']).toMatchObject({ calls: 40, batchCalls: 24 });
      expect(report.batches).toEqual([expect.objectContaining({ state: 'expired', lines: 40 })]);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('judgeflow cancel while a batch waits cancels the batch at the provider', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, batchSeconds: 120 });
  const copilots = await startSimServer({});
  try {
    await withWorker('batch-cancel', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const runId = `run-batch-cancel-${Date.now()}`;
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(2, 5),
        judge: { baseURL: judge.url, model: 'sim-judge', batch: true, batchPollSeconds: 1 },
        copilots: simCopilots(copilots.url, { A: 'sim-terse' }),
      });
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => (await world.store.judgeBatches(runId)).some((b) => b.batchId), 60_000);
      const cancelled = await cliInProcess(['cancel', runId], env);
      expect(cancelled.code).toBe(0);
      await expect(handle.result()).rejects.toThrow();
      await until(
        async () => (await simBatches(judge)).every((b) => ['cancelling', 'cancelled'].includes(b.status)),
        20_000,
      );
      expect((await world.store.judgeBatches(runId))[0].state).toMatch(/^cancel/);
      expect(live(judge)).toHaveLength(0);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('judgeflow cancel while an Anthropic Message Batch waits cancels it at Anthropic (POST …/cancel) and records it', async () => {
  const KEY = 'sk-ant-cancel-test';
  const judge = await startSimServer({ handler: scriptedLatticeJudge, batchSeconds: 120 });
  const copilots = await startSimServer({});
  const anthropicBatches = async () =>
    (
      (await (
        await fetch(`${judge.url}/messages/batches?limit=100`, {
          headers: { 'anthropic-version': '2023-06-01', 'x-api-key': KEY },
        })
      ).json()) as { data: Array<{ id: string; processing_status: string; cancel_initiated_at: string | null }> }
    ).data;
  try {
    await withWorker(
      'batch-cancel-anthropic',
      async (world) => {
        const env = {
          JUDGEFLOW_HOME: world.dir,
          JUDGEFLOW_STORE: world.storeFile,
          JUDGEFLOW_TASK_QUEUE: world.taskQueue,
        };
        const runId = `run-batch-cancel-anthropic-${Date.now()}`;
        const config = runConfig(tempDir(), {
          protocol: 'lattice',
          queries: latticeGrid(2, 5),
          judge: {
            baseURL: judge.url,
            provider: 'anthropic',
            apiKeyEnv: 'ANTHROPIC_API_KEY',
            model: 'claude-sim-judge',
            batch: true,
            batchPollSeconds: 1,
          },
          copilots: simCopilots(copilots.url, { A: 'sim-terse' }),
        });
        const handle = await world.client.workflow.start(benchmarkRun, {
          taskQueue: world.taskQueue,
          workflowId: runId,
          args: [runInput(config, runId)],
        });
        await until(async () => (await world.store.judgeBatches(runId)).some((b) => b.batchId), 60_000);
        const cancelled = await cliInProcess(['cancel', runId], env);
        expect(cancelled.code).toBe(0);
        await expect(handle.result()).rejects.toThrow();
        await until(async () => (await anthropicBatches()).every((b) => b.cancel_initiated_at !== null), 20_000);
        const [stored] = await world.store.judgeBatches(runId);
        expect(stored.api).toBe('anthropic');
        expect(stored.state).toMatch(/^cancel|^ended/);
        expect((await anthropicBatches()).map((b) => b.id)).toEqual([stored.batchId]);
        expect(live(judge)).toHaveLength(0);
      },
      { ...process.env, ANTHROPIC_API_KEY: KEY },
    );
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('CryptoAnalystBench in batches: turn by turn across queries, every conversation complete, no live judge call', async () => {
  const judge = await startSimServer({ handler: firstFavouringJudge(0), batchSeconds: 0.3 });
  const copilots = await startSimServer({});
  const dir = tempDir();
  const queries = ['ETH staking yields', 'SOL outage risk', 'BTC ETF flows', 'ARB unlock schedule'].map((t, i) => ({
    id: `q${i + 1}`,
    text: `What should I know about ${t} this month?`,
    tags: ['DeFi'],
  }));
  try {
    await withWorker('batch-cab', async ({ client, taskQueue, store }) => {
      const runId = `run-batch-cab-${Date.now()}`;
      const config = runConfig(dir, {
        protocol: 'cab',
        queries: writeQueries(dir, queries),
        judge: { baseURL: judge.url, model: 'first-favouring-judge', batch: true, batchPollSeconds: 1 },
        copilots: simCopilots(copilots.url, { Nimbus: 'sim-thorough', Quasar: 'sim-copilot', Zephyr: 'sim-terse' }),
      });
      const result = (await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      })) as RunResult;
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect((await store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(12);
      expect(live(judge)).toHaveLength(0);
      const batches = await store.judgeBatches(runId);
      // Three scoring turns and the ranking, one batch each, every query's turn k in batch k (plus the error taxonomy's).
      expect(batches.length).toBeGreaterThanOrEqual(4);
      expect(batches.slice(0, 4).map((b) => b.lines)).toEqual([4, 4, 4, 4]);
      expect(batchLines(judge).length).toBe(batches.reduce((n, b) => n + b.lines, 0));
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('an Anthropic judge in Message Batches: every judgment from the batch, the key only in the worker', async () => {
  const KEY = 'sk-ant-batch-canary-7d1';
  const judge = await startSimServer({ batchSeconds: 0.3 });
  const copilots = await startSimServer({});
  try {
    await withWorker(
      'batch-anthropic',
      async ({ client, taskQueue, store }) => {
        const runId = `run-batch-anthropic-${Date.now()}`;
        const config = runConfig(tempDir(), {
          protocol: 'lattice',
          queries: latticeGrid(2, 5),
          judge: {
            baseURL: judge.url,
            provider: 'anthropic',
            apiKeyEnv: 'ANTHROPIC_API_KEY',
            model: 'claude-sim-judge',
            batch: true,
            batchPollSeconds: 1,
          },
          copilots: simCopilots(copilots.url, { A: 'sim-terse' }),
        });
        const handle = await client.workflow.start(benchmarkRun, {
          taskQueue,
          workflowId: runId,
          args: [runInput(config, runId)],
        });
        const result = (await handle.result()) as RunResult;
        expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
        expect((await store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(10);
        expect(live(judge)).toHaveLength(0);
        expect(batchLines(judge)).toHaveLength(10);
        expect((await store.judgeBatches(runId)).map((b) => b.api)).toEqual(['anthropic']);
        expect(JSON.stringify(await handle.fetchHistory())).not.toContain(KEY);
      },
      { ...process.env, ANTHROPIC_API_KEY: KEY },
    );
  } finally {
    await judge.close();
    await copilots.close();
  }
});
