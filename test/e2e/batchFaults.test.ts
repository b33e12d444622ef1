import { runInput } from '../../client/startRun';
import { jsonLines } from '../../core/llm/providers/batch/http';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/** A damaged results file and a batch that never ends (issue 30, rows 16 and 17), against the simulator's Batch APIs. */
jest.setTimeout(240_000);

const live = (sim: SimServer) =>
  sim.requests.filter((r) => !r.batch && (r.path === '/v1/chat/completions' || r.path === '/v1/messages'));
const batchLines = (sim: SimServer) => sim.requests.filter((r) => r.batch);
const fields = (judgeURL: string, copilotsURL: string, judge: Record<string, unknown> = {}) => ({
  protocol: 'lattice',
  queries: latticeGrid(4, 5), // 40 lines
  judge: { baseURL: judgeURL, model: 'sim-judge', concurrency: 4, batch: true, batchPollSeconds: 1, ...judge },
  copilots: simCopilots(copilotsURL, { A: 'sim-thorough', B: 'sim-terse' }),
});

test("a results line that is not JSON is that line's failure, asked live, not the whole ingest's; its error quotes a short excerpt", () => {
  const good = JSON.stringify({ custom_id: 'j1_a', result: { type: 'succeeded', message: {} } });
  const cut = JSON.stringify({
    custom_id: 'j2_b',
    result: { type: 'succeeded', message: { content: 'x'.repeat(5_000) } },
  }).slice(0, 3_000);
  const { lines, malformed } = jsonLines(`${good}\n${cut}\n{oops\n`, 'batch b1 results');
  expect(lines).toHaveLength(1);
  expect(malformed.map((m) => [m.line, m.customId])).toEqual([
    [2, 'j2_b'],
    [3, null],
  ]);
  expect(malformed[0].error.length).toBeLessThan(300);
  // Nothing readable at all (an error page): the download is asked again, its error still short.
  expect(() => jsonLines(`<html>${'x'.repeat(10_000)}</html>`, 'batch b1 results')).toThrow(/line 1 is not JSON/);
  try {
    jsonLines(`<html>${'x'.repeat(10_000)}</html>`, 'batch b1 results');
  } catch (error) {
    expect((error as Error).message.length).toBeLessThan(400);
    expect((error as { raw: string }).raw.length).toBeLessThanOrEqual(4_000);
  }
});

test.each(['openai', 'anthropic'] as const)(
  '%s: every 5th results line cut off: those lines are asked live, the others come from the batch, the run completes',
  async (api) => {
    const judge = await startSimServer({ handler: scriptedLatticeJudge, batchSeconds: 1, batchMalformedLines: 5 });
    const copilots = await startSimServer({});
    try {
      await withWorker(
        `batch-malformed-${api}`,
        async ({ client, taskQueue, store }) => {
          const runId = `run-batch-malformed-${api}-${Date.now()}`;
          const judgeFields =
            api === 'anthropic'
              ? { provider: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY', model: 'claude-sim-judge' }
              : {};
          const config = runConfig(tempDir(), fields(judge.url, copilots.url, judgeFields));
          const result = (await client.workflow.execute(benchmarkRun, {
            taskQueue,
            workflowId: runId,
            args: [runInput(config, runId)],
          })) as RunResult;
          expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
          expect((await store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(40);
          expect(batchLines(judge)).toHaveLength(40);
          expect(live(judge)).toHaveLength(8); // the 8 cut-off lines, each asked once
          expect((await store.judgeBatches(runId)).map((b) => b.api)).toEqual([api]);
        },
        { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-test' },
      );
    } finally {
      await judge.close();
      await copilots.close();
    }
  },
);

test('a batch stuck in_progress past judge.batchDeadlineHours is cancelled at the provider and its lines asked live', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, batchSeconds: 1, batchStuck: true });
  const copilots = await startSimServer({});
  try {
    await withWorker('batch-stuck', async ({ client, taskQueue, store }) => {
      const runId = `run-batch-stuck-${Date.now()}`;
      const config = runConfig(tempDir(), fields(judge.url, copilots.url, { batchDeadlineHours: 0.002 })); // 7.2 s
      const result = (await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      })) as RunResult;
      expect(result.progress).toMatchObject({ stage: 'done', failures: 0 });
      expect((await store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(40);
      expect(batchLines(judge)).toHaveLength(0);
      expect(live(judge)).toHaveLength(40);
      const listed = (
        (await (await fetch(`${judge.url}/batches?limit=100`)).json()) as { data: Array<{ status: string }> }
      ).data;
      expect(listed.map((b) => b.status)).toEqual([expect.stringMatching(/^cancell(ing|ed)$/)]);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
