import path from 'node:path';
import { connectClient } from '../client/connection';
import { runInput } from '../client/startRun';
import { SqliteStore } from '../stores/sqlite';
import { startSimServer } from '../sim/server';
import { benchmarkRun } from '../workflows';
import { startWorkerProcess } from './support/cli';
import { latticeGrid, runConfig, simCopilots, tempDir, uniqueQueue, until } from './support/harness';
import { scriptedLatticeJudge } from './support/judges';

jest.setTimeout(180_000);

test('a worker killed with SIGKILL mid-judging: the run completes with exactly one judgment per response, none lost', async () => {
  // A slow judge so that the kill lands while judgments are in flight.
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 120 });
  const copilots = await startSimServer({});
  const dir = tempDir();
  const home = path.join(dir, 'home');
  const queries = latticeGrid(8, 5); // 40 queries × 2 copilots = 80 judgments
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries,
    judge: { baseURL: judge.url, model: 'judge', concurrency: 3 },
    copilots: simCopilots(copilots.url, { A: 'sim-thorough', B: 'sim-terse' }),
    chunkSize: 10,
  });
  const env = { ...process.env, JUDGEFLOW_HOME: home, JUDGEFLOW_TASK_QUEUE: uniqueQueue('kill') };
  let worker = startWorkerProcess(env);
  const client = await connectClient();
  const store = new SqliteStore(path.join(home, 'results.db'));
  try {
    const runId = 'run-kill-' + Date.now();
    const handle = await client.workflow.start(benchmarkRun, { taskQueue: env.JUDGEFLOW_TASK_QUEUE, workflowId: runId, args: [runInput(config, runId)] });
    const judged = async () => (await store.judgments(runId)).length;
    await until(async () => (await judged()) >= 20, 90_000);
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    const atKill = await judged();
    const requestsAtKill = judge.requests.length;
    expect(atKill).toBeLessThan(80);
    worker = startWorkerProcess(env);
    const result = await handle.result();

    const judgments = (await store.judgments(runId));
    expect(judgments).toHaveLength(80);
    expect(new Set(judgments.map((j) => `${j.queryId}/${j.copilot}`)).size).toBe(80);
    expect(judgments.every((j) => j.status === 'ok')).toBe(true);
    expect(result.progress).toMatchObject({ stage: 'done', done: 80, total: 80, failures: 0 });
    // Finished judgments were not paid for twice: only those in flight at the kill (≤ judge concurrency) were re-asked.
    expect(judge.requests.length).toBeLessThanOrEqual(80 + 3);
    // After the restart only the judgments still missing (plus those in flight at the kill) were asked for.
    expect(judge.requests.length - requestsAtKill).toBeLessThanOrEqual(80 - atKill + 3);
    expect(await store.responses(runId)).toHaveLength(80);
  } finally {
    worker.kill('SIGKILL');
    await store.close();
    await client.connection.close();
    await judge.close();
    await copilots.close();
  }
});
