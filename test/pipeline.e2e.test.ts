import fs from 'node:fs';
import path from 'node:path';
import { benchmarkRun } from '../workflows';
import { runInput } from '../client/startRun';
import { startSimServer, type SimServer } from '../sim/server';
import { latticeGrid, runConfig, tempDir, withWorker } from './support/harness';
import { scriptedLatticeJudge } from './support/judges';

let judge: SimServer;
let slowCopilots: SimServer;
let limited: SimServer;
const LIMIT = { requests: 12, windowMs: 2_000 }; // 6 requests a second
beforeAll(async () => {
  judge = await startSimServer({ handler: scriptedLatticeJudge });
  slowCopilots = await startSimServer({ latencyMs: 150 });
  // An endpoint that answers 429 + Retry-After above its rate and sends no x-ratelimit headers: only AIMD can adapt to it.
  limited = await startSimServer({ latencyMs: 100, rateLimit: { requestsPerMinute: LIMIT.requests, windowMs: LIMIT.windowMs, sendHeaders: false } });
});
afterAll(async () => {
  await Promise.all([judge, slowCopilots, limited].map((s) => s.close()));
});

/** Activity names a run's histories scheduled (every run of the continue-as-new chain). */
async function scheduledActivities(client: import('@temporalio/client').Client, workflowId: string): Promise<string[]> {
  const names: string[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    const history = await client.workflow.getHandle(workflowId, wf.runId).fetchHistory();
    for (const e of history.events ?? []) if (e.activityTaskScheduledEventAttributes) names.push(e.activityTaskScheduledEventAttributes.activityType!.name!);
  }
  return names;
}

test('judging starts before collection ends; answers held in a CSV are imported in one step', async () => {
  const dir = tempDir();
  const queries = latticeGrid(4, 3); // 12 queries
  const csv = path.join(dir, 'held.csv');
  fs.writeFileSync(csv, 'query,Held_response\n' + queries.map((q) => `"${String(q.text).replace(/"/g, '""')}",A held answer about ${q.id}.`).join('\n') + '\n');
  const cfg = runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: judge.url, model: 'judge-model-x', concurrency: 4 },
    copilots: [
      { name: 'Sorin', type: 'openai', baseURL: slowCopilots.url, model: 'sim-thorough', concurrency: 2 },
      { name: 'Surfboard', type: 'openai', baseURL: slowCopilots.url, model: 'sim-terse', concurrency: 2 },
      { name: 'Held', type: 'csv', path: csv },
    ],
  });
  await withWorker('pipeline-overlap', async ({ client, taskQueue, store }) => {
    const judgeBefore = judge.requests.length;
    const copilotBefore = slowCopilots.requests.length;
    const runId = 'run-overlap-' + Date.now();
    const result = await client.workflow.execute(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] });

    const judgeCalls = judge.requests.slice(judgeBefore);
    const copilotCalls = slowCopilots.requests.slice(copilotBefore);
    expect(judgeCalls).toHaveLength(36);
    expect(copilotCalls).toHaveLength(24);
    // Judged while collecting: the first judge call came before the last copilot call was even sent.
    const firstJudge = Math.min(...judgeCalls.map((r) => r.at));
    const lastCopilot = Math.max(...copilotCalls.map((r) => r.at));
    expect(firstJudge).toBeLessThan(lastCopilot);
    // The store agrees: some judgment was stored before the last answer was.
    const lastAnswer = Math.max(...(await store.responses(runId)).filter((r) => r.adapter === 'openai').map((r) => Date.parse(r.finishedAt!)));
    expect(Math.min(...(await store.judgments(runId)).map((j) => Date.parse(j.createdAt)))).toBeLessThan(lastAnswer);

    // The CSV's 12 answers: one import activity, no per-answer collection.
    const activities = await scheduledActivities(client, runId);
    expect(activities.filter((a) => a === 'importAnswers')).toHaveLength(1);
    expect(activities.filter((a) => a === 'collectAnswer')).toHaveLength(24);
    expect((await store.responses(runId)).filter((r) => r.copilot === 'Held' && r.status === 'ok')).toHaveLength(12);
    expect(result.progress.stages).toEqual({ collect: { done: 36, total: 36, failures: 0 }, judge: { done: 36, total: 36, failures: 0 } });
  });
}, 90_000);

test('an endpoint answering 429 + Retry-After above its rate: the run completes, few calls are refused, the achieved rate is near the limit', async () => {
  const queries = latticeGrid(16, 5).slice(0, 60);
  const cfg = runConfig(tempDir(), {
    protocol: 'lattice',
    queries,
    judge: { baseURL: judge.url, model: 'judge-model-x', concurrency: 8 },
    copilots: [{ name: 'Limited', type: 'openai', baseURL: limited.url, model: 'sim-terse', concurrency: 8, retry: { maxAttempts: 3, initialIntervalMs: 200, backoffCoefficient: 2, maxIntervalMs: 2000 } }],
  });
  await withWorker('pipeline-rate-limit', async ({ client, taskQueue, store }) => {
    const before = limited.requests.length;
    const runId = 'run-limited-' + Date.now();
    await client.workflow.execute(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] });
    expect((await store.responses(runId)).filter((r) => r.status === 'ok')).toHaveLength(60);

    const calls = limited.requests.slice(before);
    const refused = calls.filter((r) => r.rateLimited).length;
    const accepted = calls.filter((r) => !r.rateLimited);
    const seconds = (accepted[accepted.length - 1].at - accepted[0].at) / 1000;
    const rate = (accepted.length - 1) / seconds;
    const limit = LIMIT.requests / (LIMIT.windowMs / 1000);
    console.log(`rate-limited endpoint: ${calls.length} calls, ${refused} refused with 429 (${((100 * refused) / calls.length).toFixed(1)}%), achieved ${rate.toFixed(1)}/s against a limit of ${limit}/s`);
    // Unadapted, 8 calls of 100 ms in flight would send 80/s and have most calls refused.
    expect(refused / calls.length).toBeLessThan(0.2);
    // Near the limit, and never above what the endpoint lets through.
    expect(rate).toBeGreaterThan(0.5 * limit);
    expect(rate).toBeLessThanOrEqual(limit * 1.6); // the sim's window admits a burst of 12 at the start
  });
}, 90_000);
