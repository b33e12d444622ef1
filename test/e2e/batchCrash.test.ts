import path from 'node:path';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import { killableWorker } from '../support/cli';
import { latticeGrid, runConfig, simCopilots, tempDir, uniqueQueue, until } from '../support/harness';

/**
 * A worker killed while the create reply of a batch is in flight (issue 30, row 6): the batch exists at the provider,
 * its id was never stored. The retried submit finds it (Anthropic: by created_at and request count; an OpenAI-compatible
 * host whose list leaves metadata out: by its input file's name) instead of paying for a second one.
 */
jest.setTimeout(300_000);

const KEY = 'sk-ant-crash-test';
const listed = async (sim: SimServer, api: 'openai' | 'anthropic'): Promise<Array<{ id: string }>> => {
  const response =
    api === 'anthropic'
      ? await fetch(`${sim.url}/messages/batches?limit=100`, {
          headers: { 'anthropic-version': '2023-06-01', 'x-api-key': KEY },
        })
      : await fetch(`${sim.url}/batches?limit=100`);
  return ((await response.json()) as { data: Array<{ id: string }> }).data;
};

test.each(['anthropic', 'openai'] as const)(
  '%s: worker SIGKILLed while the create reply is delayed: after restart the run adopts the batch it made, one batch paid, every line answered once',
  async (api) => {
    const judge = await startSimServer({
      batchSeconds: 2,
      batchCreateReplyDelayMs: 6_000,
      batchListOmitsMetadata: true,
    });
    const copilots = await startSimServer({});
    const home = path.join(tempDir(), 'home');
    process.env.JF_CRASH_ANTHROPIC_KEY = KEY; // the worker process inherits it
    const world = await killableWorker(home, uniqueQueue(`batch-crash-${api}`));
    try {
      const judgeConfig =
        api === 'anthropic'
          ? { provider: 'anthropic', apiKeyEnv: 'JF_CRASH_ANTHROPIC_KEY', model: 'claude-sim-judge' }
          : { model: 'sim-judge' };
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(2, 5),
        judge: { baseURL: judge.url, concurrency: 4, batch: true, batchPollSeconds: 1, ...judgeConfig },
        copilots: simCopilots(copilots.url, { A: 'sim-terse' }),
      });
      const runId = `run-batch-crash-${api}-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.env.JUDGEFLOW_TASK_QUEUE,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      // The batch is made at the provider; its create reply waits 6 s: the worker dies before it comes.
      await until(async () => (await listed(judge, api)).length === 1, 90_000);
      await world.kill();
      expect((await world.store.judgeBatches(runId)).map((b) => b.batchId)).toEqual([null]); // the intent, no id
      world.restart();
      const result = (await handle.result()) as RunResult;
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect((await world.store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(10);
      expect(await listed(judge, api)).toHaveLength(1); // one batch paid for
      expect(judge.requests.filter((r) => r.batch)).toHaveLength(10); // each line answered once
      const stored = await world.store.judgeBatches(runId);
      expect(stored.map((b) => b.batchId)).toEqual([(await listed(judge, api))[0].id]);
    } finally {
      delete process.env.JF_CRASH_ANTHROPIC_KEY;
      await world.close();
      await judge.close();
      await copilots.close();
    }
  },
);
