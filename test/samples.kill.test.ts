import path from 'node:path';
import { connectClient } from '../client/connection';
import { runInput } from '../client/startRun';
import { SqliteStore } from '../stores/sqlite';
import { startSimServer } from '../sim/server';
import { benchmarkRun } from '../workflows';
import { startWorkerProcess } from './support/cli';
import { latticeGrid, runConfig, simCopilots, tempDir, uniqueQueue, until } from './support/harness';
import { gradedText, scriptedLatticeJudge } from './support/judges';

jest.setTimeout(180_000);

test('a worker killed with SIGKILL mid-judging with judge.samples: 3: every sample stored once, no judge call repeated beyond those in flight', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 100 });
  const copilots = await startSimServer({});
  const dir = tempDir();
  const home = path.join(dir, 'home');
  const CONCURRENCY = 3;
  const EXPECTED = 20 * 2 * 3; // 20 queries × 2 copilots × 3 samples
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries: latticeGrid(4, 5),
    judge: { baseURL: judge.url, model: 'judge', concurrency: CONCURRENCY, samples: 3 },
    copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-copilot' }),
    chunkSize: 25,
  });
  const env = { ...process.env, JUDGEFLOW_HOME: home, JUDGEFLOW_TASK_QUEUE: uniqueQueue('kill-samples') };
  let worker = startWorkerProcess(env);
  const client = await connectClient();
  const store = new SqliteStore(path.join(home, 'results.db'));
  try {
    const runId = 'run-kill-samples-' + Date.now();
    const handle = await client.workflow.start(benchmarkRun, { taskQueue: env.JUDGEFLOW_TASK_QUEUE, workflowId: runId, args: [runInput(config, runId)] });
    const judged = async () => (await store.judgments(runId)).length;
    await until(async () => (await judged()) >= 40, 90_000);
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    const atKill = await judged();
    const requestsAtKill = judge.requests.length;
    expect(atKill).toBeLessThan(EXPECTED);
    worker = startWorkerProcess(env);
    await handle.result();

    const judgments = await store.judgments(runId);
    expect(judgments).toHaveLength(EXPECTED);
    expect(new Set(judgments.map((j) => `${j.queryId}/${j.copilot}/${j.sample}`)).size).toBe(EXPECTED);
    expect(new Set(judgments.map((j) => j.sample))).toEqual(new Set([0, 1, 2]));
    expect(judgments.every((j) => j.status === 'ok')).toBe(true);
    // Only calls in flight at the kill were asked again, before and after the restart.
    expect(judge.requests.length).toBeLessThanOrEqual(EXPECTED + CONCURRENCY);
    expect(judge.requests.length - requestsAtKill).toBeLessThanOrEqual(EXPECTED - atKill + CONCURRENCY);
    // Each response was asked 3 times, plus at most one repeat for a call in flight at the kill.
    const perText = new Map<string, number>();
    for (const r of judge.requests) perText.set(gradedText(r.body), (perText.get(gradedText(r.body)) ?? 0) + 1);
    expect(perText.size).toBe(40);
    expect([...perText.values()].every((n) => n >= 3 && n <= 4)).toBe(true);
  } finally {
    worker.kill('SIGKILL');
    await store.close();
    await client.connection.close();
    await judge.close();
    await copilots.close();
  }
});
