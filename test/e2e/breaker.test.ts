import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { progressQuery } from '../../contract/control';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * The circuit breaker: a copilot whose first calls all fail for a non-transient reason (a wrong answerPath) pauses the
 * run with the reason in the adapter's own words, instead of being called for the whole run.
 */
jest.setTimeout(120_000);

test('a copilot failing from its first calls (wrong answerPath) pauses the run after 5 of them, saying why; the other copilot is not failed', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  const copilots = await startSimServer({ latencyMs: 30 });
  try {
    await withWorker('breaker', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(4, 5), // 20 queries
        judge: { baseURL: judge.url, model: 'sim-judge' },
        copilots: [
          ...simCopilots(copilots.url, { Good: 'sim-terse' }).map((c) => ({ ...c, concurrency: 1 })),
          {
            name: 'MyAPI',
            type: 'http',
            url: `${copilots.url}/chat/completions`,
            body: { model: 'sim-copilot', messages: [{ role: 'user', content: '{{query}}' }] },
            answerPath: 'data.text',
            concurrency: 1,
          },
        ],
      });
      const runId = `run-breaker-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => Boolean((await handle.query(progressQuery)).paused), 60_000);
      const { paused } = await handle.query(progressQuery);
      expect(paused).toMatchObject({
        by: 'breaker',
        reason: expect.stringMatching(
          /^copilot MyAPI failing: copilot MyAPI: the reply has no answer at answerPath "data\.text" \(.*choices/,
        ),
      });
      const status = JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout);
      expect(status).toMatchObject({ status: 'paused', paused: { by: 'breaker' } });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const failed = (await world.store.responses(runId)).filter((r) => r.copilot === 'MyAPI');
      // Its first five, and at most what was in flight when the breaker tripped: one start, which may carry a batch of
      // up to 5 items (workflows/limits/itemGroupSize.ts) — not the 20 of the whole run.
      expect(failed.length).toBeGreaterThanOrEqual(5);
      expect(failed.length).toBeLessThanOrEqual(5 + 5);
      expect(failed.every((r) => r.status === 'failed' && r.errorKind === 'invalid_reply')).toBe(true);
      expect(
        (await world.store.responses(runId)).filter((r) => r.copilot === 'Good').every((r) => r.status === 'ok'),
      ).toBe(true);
      await handle.cancel();
      await handle.result().catch(() => undefined);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('a copilot that starts well and then fails every other item trips the failure-rate window, in its own words', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  const copilots = await startSimServer({});
  try {
    await withWorker('breaker-window', async (world) => {
      // The query text is also the model asked: sim-refusal-* answers content null (the simulator's refusal profile), so
      // the reply has nothing at answerPath — a lasting failure — while sim-copilot-* answers. Six good items first (the
      // first-calls rule holds), then every other item fails: the window of 10 is half failures by item 15 or 16.
      const queries = Array.from({ length: 20 }, (_, i) => ({
        id: `q${String(i + 1).padStart(2, '0')}`,
        text: i >= 6 && i % 2 === 0 ? `sim-refusal-${i}` : `sim-copilot-${i}`,
        task: 'T1',
        category: 'C1',
      }));
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries,
        judge: { baseURL: judge.url, model: 'sim-judge' },
        failFast: { window: 10, maxFailureRate: 0.5 },
        copilots: [
          {
            name: 'Flaky',
            type: 'http',
            url: `${copilots.url}/chat/completions`,
            body: {
              model: '{{query}}',
              messages: [{ role: 'user', content: '{{query}}' }],
              response_format: { type: 'json_object' },
            },
            answerPath: 'choices.0.message.content',
            concurrency: 1,
          },
        ],
      });
      const runId = `run-breaker-window-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => Boolean((await handle.query(progressQuery)).paused), 60_000);
      const { paused } = await handle.query(progressQuery);
      expect(paused).toMatchObject({
        by: 'breaker',
        reason: expect.stringMatching(
          /^copilot Flaky failing: 5 of the last 10 items failed: .*no answer at answerPath "choices\.0\.message\.content"/,
        ),
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const responses = await world.store.responses(runId);
      // Not before the window filled (the first-calls rule did not fire on the good start): tripped at item 15, with at
      // most one start in flight after it (16 in every run here; a start may carry a batch of up to 5).
      expect(responses.length).toBeGreaterThanOrEqual(15);
      expect(responses.filter((r) => r.status === 'failed')).toHaveLength(
        responses.filter((r) => /refusal/.test(queries.find((q) => q.id === r.queryId)!.text)).length,
      );
      expect(
        responses
          .filter((r) => r.status === 'ok')
          .every((r) => r.queryId <= 'q06' || Number(r.queryId.slice(1)) % 2 === 0),
      ).toBe(true);
      await handle.cancel();
      await handle.result().catch(() => undefined);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
