import { spawn } from 'node:child_process';
import path from 'node:path';
import { connectClient } from '../../client/connection';
import { runInput } from '../../client/startRun';
import { freePort } from '../../client/temporalServer';
import { startSimServer } from '../../sim/server';
import { SqliteStore } from '../../stores/sqlite';
import { benchmarkRun } from '../../workflows';
import { CLI } from '../support/cli';
import { latticeGrid, runConfig, simCopilots, tempDir, uniqueQueue, until } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

jest.setTimeout(180_000);

/** The `name{labels} value` lines of one metric, summed over every label set that contains `labels`. */
function total(text: string, metric: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

test('judgeflow worker --metrics-port serves Temporal and judgeflow metrics; the call counters rise during a run and end at the stored calls', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 100 });
  const copilots = await startSimServer({});
  const dir = tempDir('jf-metrics-');
  const home = path.join(dir, 'home');
  const queue = uniqueQueue('metrics');
  const port = await freePort();
  const worker = spawn(process.execPath, [CLI, 'worker', '--metrics-port', String(port)], {
    env: { ...process.env, JUDGEFLOW_HOME: home, JUDGEFLOW_TASK_QUEUE: queue },
    stdio: 'ignore',
  });
  const client = await connectClient();
  const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  try {
    await until(async () => (await scrape().catch(() => '')).includes('# TYPE'), 60_000);
    const config = runConfig(dir, {
      protocol: 'lattice',
      queries: latticeGrid(4, 5),
      judge: { baseURL: judge.url, model: 'judge', concurrency: 2 },
      copilots: simCopilots(copilots.url, { A: 'sim-thorough' }),
    });
    const runId = `run-metrics-${Date.now()}`;
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue: queue,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    await until(
      async () => total(await scrape(), 'judgeflow_llm_calls_total', { role: 'judge', outcome: 'ok' }) >= 3,
      90_000,
    );
    const during = total(await scrape(), 'judgeflow_llm_calls_total', { role: 'judge', outcome: 'ok' });
    await handle.result();
    await until(
      async () => total(await scrape(), 'judgeflow_llm_calls_total', { role: 'judge', outcome: 'ok' }) >= 20,
      30_000,
    );
    const after = await scrape();
    expect(during).toBeLessThan(20);
    expect(total(after, 'judgeflow_llm_calls_total', { role: 'judge', name: 'judge', outcome: 'ok' })).toBe(20);
    expect(total(after, 'judgeflow_llm_calls_total', { role: 'copilot', name: 'A', outcome: 'ok' })).toBe(20);
    const store = new SqliteStore(path.join(home, 'results.db'));
    const stored = (await store.llmCalls(runId)).filter((c) => c.role === 'judge');
    await store.close();
    expect(total(after, 'judgeflow_llm_tokens_total', { role: 'judge', kind: 'prompt' })).toBe(
      stored.reduce((n, c) => n + (c.promptTokens ?? 0), 0),
    );
    expect(after).toMatch(/^temporal_/m); // Temporal's own worker metrics on the same endpoint
  } finally {
    worker.kill('SIGKILL');
    await client.connection.close();
    await judge.close();
    await copilots.close();
  }
});
