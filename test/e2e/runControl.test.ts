import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { connectWorker } from '../../client/connection';
import { runInput } from '../../client/startRun';
import { SqliteStore } from '../../stores/sqlite';
import { benchmarkRun } from '../../workflows';
import { progressQuery } from '../../contract/control';
import { cliInProcess } from '../support/cliInProcess';
import { runConfig, tempDir, uniqueQueue, until, withWorker, writeQueries } from '../support/harness';
import { simServersForFile } from '../support/sims';
import { installQuietRuntime } from '../support/quietTemporal';

/** Runs that are cancelled, rate limited, terminated or misconfigured end, and the store says what happened. */

const sim = simServersForFile({
  copilots: {},
  slowCopilots: { latencyMs: 20_000 },
  slowJudge: { latencyMs: 2_500 },
  judge: {},
});

const cabQueries = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `q${i + 1}`,
    text: `Is token ${i + 1} worth buying after the unlock?`,
    tags: 'Trading',
  }));
const latticeQueries = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `t1-c${i + 1}`,
    text: `Should I stake ETH on Lido, variant ${i + 1}?`,
    task: 'T1',
    category: `C${(i % 5) + 1}`,
  }));

/** A small LATTICE run on the shared judge sim. */
function latticeRun(queryCount: number, copilots: Array<Record<string, unknown>>) {
  return runConfig(tempDir(), {
    protocol: 'lattice',
    queries: latticeQueries(queryCount),
    judge: { baseURL: sim.judge.url, model: 'sim-judge' },
    copilots,
  });
}

async function closed(handle: WorkflowHandle, ms: number): Promise<'closed' | 'still open'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      handle.result().then(
        () => 'closed' as const,
        () => 'closed' as const,
      ),
      new Promise<'still open'>((r) => (timer = setTimeout(() => r('still open'), ms))),
    ]);
  } finally {
    clearTimeout(timer); // a pending timer would keep the jest worker alive after the file
  }
}

test('judgeflow cancel mid-judging: no judge call starts more than 15 s after the cancel; the run is recorded as cancelled', async () => {
  const { copilots, slowJudge } = sim;
  const dir = tempDir();
  // Each CAB unit is a shared conversation of 4 scoring turns, a ranking and 4 taxonomy calls: ~22 s of judge calls.
  const cfg = runConfig(dir, {
    protocol: 'cab',
    queries: writeQueries(dir, cabQueries(4)),
    judge: { baseURL: slowJudge.url, model: 'sim-judge', concurrency: 2 },
    copilots: ['A', 'B', 'C', 'D'].map((name) => ({
      name,
      type: 'openai',
      baseURL: copilots.url,
      model: 'sim-copilot',
    })),
    errorTaxonomy: true,
  });
  await withWorker('cancel-judging', async ({ client, taskQueue, store, storeFile }) => {
    const runId = `run-cancel-judging-${Date.now()}`;
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    await until(() => slowJudge.requests.length >= 3, 90_000); // well inside the first units' conversations
    const cancelledAt = Date.now();
    const cancel = await cliInProcess(['cancel', runId], {
      JUDGEFLOW_STORE: storeFile,
      JUDGEFLOW_TASK_QUEUE: taskQueue,
    });
    expect(cancel.code).toBe(0);
    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    // Watch the judge for 18 s after the cancel: calls in flight are aborted and no later call is made.
    await new Promise((r) => setTimeout(r, Math.max(0, cancelledAt + 18_000 - Date.now())));
    const lastCall = Math.max(...slowJudge.requests.map((r) => r.at));
    const secondsAfterCancel = (lastCall - cancelledAt) / 1000;
    console.log(`cancel → last judge call started: ${secondsAfterCancel.toFixed(1)} s`);
    expect(secondsAfterCancel).toBeLessThan(15);
    const run = (await store.getRun(runId))!;
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run.summary)).toContain('cancelled');
  });
}, 180_000);

test('a cancel while a rate-limited copilot waits for its next slot (request in flight) ends the run instead of wedging it', async () => {
  const { slowCopilots } = sim;
  const cfg = latticeRun(3, [
    { name: 'Slow', type: 'openai', baseURL: slowCopilots.url, model: 'sim-copilot', requestsPerMinute: 1 },
  ]);
  await withWorker('cancel-rate', async ({ client, taskQueue, store }) => {
    const runId = `run-cancel-rate-${Date.now()}`;
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    await until(() => slowCopilots.requests.some((r) => JSON.stringify(r.body).includes('variant 1')), 60_000);
    await new Promise((r) => setTimeout(r, 1_000));
    await handle.cancel();
    // Before the fix the in-flight request's rejection went unobserved during the rate-limit sleep: workflow tasks
    // failed for ever and the run never closed.
    expect(await closed(handle, 30_000)).toBe('closed');
    expect((await store.getRun(runId))!.status).toBe('failed');
  });
}, 120_000);

test('a copilot that fails fast behind requestsPerMinute: 1 does not wedge the run: it completes with the failures recorded', async () => {
  const { copilots } = sim;
  const cfg = latticeRun(2, [
    {
      name: 'Broken',
      type: 'openai',
      baseURL: copilots.url,
      model: 'fault-500:sim-copilot',
      requestsPerMinute: 1,
      retry: { maxAttempts: 2, initialIntervalMs: 100 },
    },
    { name: 'Fine', type: 'openai', baseURL: copilots.url, model: 'sim-copilot' },
  ]);
  await withWorker('rate-fail', async ({ client, taskQueue, store }) => {
    const runId = `run-rate-fail-${Date.now()}`;
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    expect(result.progress.failures).toBe(2);
    const broken = (await store.responses(runId)).filter((r) => r.copilot === 'Broken');
    expect(broken.map((r) => [r.status, r.errorKind])).toEqual([
      ['failed', 'http'],
      ['failed', 'http'],
    ]);
    expect((await store.getRun(runId))!.status).toBe('completed');
  });
}, 150_000);

test('a cancel during the report step: the run completes and the stored status matches the report files on disk', async () => {
  const cfg = latticeRun(2, [{ name: 'Fine', type: 'openai', baseURL: sim.copilots.url, model: 'sim-copilot' }]);
  const dir = path.dirname(cfg.output);
  const storeFile = path.join(dir, 'results.db');
  const store = new SqliteStore(storeFile);
  const activities = createActivities({ store, env: process.env });
  let reportStarted = false;
  // A slow disk: the report activity writes only once the cancel has been sent, so the cancel surely arrives while it
  // runs (a fixed 3 s could pass before a query and a cancel under load; 60 s is a fallback that should never be used).
  let cancelSent!: () => void;
  const cancelled = new Promise<void>((r) => (cancelSent = r));
  const slowReport: typeof activities.writeReport = async (input) => {
    reportStarted = true;
    let fallback: NodeJS.Timeout | undefined;
    await Promise.race([cancelled, new Promise((r) => (fallback = setTimeout(r, 60_000)))]);
    clearTimeout(fallback);
    return activities.writeReport(input);
  };
  const taskQueue = uniqueQueue('cancel-report');
  installQuietRuntime();
  const { connection, namespace } = await connectWorker();
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowBundle: { codePath: process.env.JUDGEFLOW_WORKFLOW_BUNDLE! },
    activities: { ...activities, writeReport: slowReport },
  });
  await withWorker('cancel-report-client', async ({ client }) => {
    await worker.runUntil(async () => {
      const runId = `run-cancel-report-${Date.now()}`;
      const handle = await client.workflow.start(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(cfg, runId)],
      });
      await until(() => reportStarted, 60_000);
      expect((await handle.query(progressQuery)).stage).toBe('report');
      await handle.cancel();
      cancelSent();
      await handle.result().catch(() => undefined);
      const temporal = (await handle.describe()).status.name;
      const stored = (await store.getRun(runId))!;
      const reportExists = fs.existsSync(path.join(dir, 'runs', runId, 'report.json'));
      expect({ temporal, stored: stored.status, reportExists }).toEqual({
        temporal: 'COMPLETED',
        stored: 'completed',
        reportExists: true,
      });
    });
  });
  await store.close();
  await connection.close();
}, 120_000);

test('a copilot name too long for a child workflow id does not matter: a run that judges while it collects starts no child workflows', async () => {
  const cfg = latticeRun(1, [{ name: 'Short', type: 'openai', baseURL: sim.copilots.url, model: 'sim-copilot' }]);
  // Past config validation (which bounds names): the workflow itself must not wedge on such a name.
  cfg.copilots[0].name = 'N'.repeat(2_000);
  await withWorker('long-id', async ({ client, taskQueue, store }) => {
    const runId = `run-long-id-${Date.now()}`;
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    expect(await closed(handle, 30_000)).toBe('closed');
    await handle.result();
    expect((await store.getRun(runId))!.status).toBe('completed');
    expect((await store.responses(runId)).map((r) => r.copilot)).toEqual(['N'.repeat(2_000)]);
  });
}, 90_000);

test('a run terminated in Temporal is recorded as failed with the reason by status and runs', async () => {
  const cfg = latticeRun(1, [{ name: 'Slow', type: 'openai', baseURL: sim.slowCopilots.url, model: 'sim-copilot' }]);
  await withWorker('terminate', async ({ client, taskQueue, store, storeFile }) => {
    const runId = `run-terminate-${Date.now()}`;
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });
    await until(async () => (await store.getRun(runId)) !== null, 30_000);
    await handle.terminate('operator pulled the plug');
    expect((await store.getRun(runId))!.status).toBe('running'); // nothing in the workflow ran to record it

    const runs = await cliInProcess(['runs', '--json'], { JUDGEFLOW_STORE: storeFile });
    expect(JSON.parse(runs.stdout).find((r: { runId: string }) => r.runId === runId)).toMatchObject({
      status: 'failed',
      error: 'terminated in Temporal: operator pulled the plug',
    });
    const status = await cliInProcess(['status', runId, '--json'], { JUDGEFLOW_STORE: storeFile });
    expect(JSON.parse(status.stdout)).toMatchObject({
      status: 'failed',
      stage: 'terminated',
      error: 'terminated in Temporal: operator pulled the plug',
    });
  });
}, 90_000);
