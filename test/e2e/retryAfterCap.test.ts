import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { progressQuery } from '../../contract/control';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * A copilot answering 503 with `Retry-After: 600` (issue 30, row 15): the wait is capped by the copilot's
 * `retry.maxRetryAfterSeconds`, so the run finishes in seconds instead of holding ten minutes per attempt, and status
 * says what the run is waiting for meanwhile.
 */
jest.setTimeout(120_000);

test("Retry-After: 600 on a 503 is capped at retry.maxRetryAfterSeconds, and status shows the wait in the copilot's words", async () => {
  let refused = 0;
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  // The first two questions are refused once each, with a ten-minute Retry-After.
  const copilots = await startSimServer({
    handler: () =>
      refused++ < 2 ? { status: 503, headers: { 'retry-after': '600' }, content: 'overloaded' } : undefined,
  });
  try {
    await withWorker('retry-after-cap', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const copilot = {
        ...simCopilots(copilots.url, { Busy: 'sim-terse' })[0],
        concurrency: 1,
        retry: { maxAttempts: 5, initialIntervalMs: 100, maxRetryAfterSeconds: 4 },
      };
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(1, 3),
        judge: { baseURL: judge.url, model: 'sim-judge' },
        copilots: [copilot],
      });
      const runId = `run-retry-after-${Date.now()}`;
      const started = Date.now();
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => Boolean((await handle.query(progressQuery)).waiting?.length), 30_000);
      const status = await cliInProcess(['status', runId, '--json'], env);
      expect(JSON.parse(status.stdout).waiting).toEqual([
        expect.stringMatching(/^copilot Busy: waiting 4 s \(Retry-After\) after HTTP 503, \d s left$/),
      ]);
      expect((await cliInProcess(['status', runId], env)).stdout).toMatch(
        /Waiting:\n {2}copilot Busy: waiting 4 s \(Retry-After\) after HTTP 503/,
      );
      const result = await handle.result();
      expect(result.progress.failures).toBe(0);
      // Two holds of 4 s at most, not 600 s each.
      expect(Date.now() - started).toBeLessThan(60_000);
      expect((await world.store.responses(runId)).every((r) => r.status === 'ok')).toBe(true);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('the judge too: Retry-After: 600 on a 503 is capped at judge.maxRetryAfterSeconds, and status shows what the judge waits for', async () => {
  let refused = 0;
  // The first two judge calls are refused once each, with a ten-minute Retry-After.
  const judge = await startSimServer({
    handler: (...args) =>
      refused++ < 2
        ? { status: 503, headers: { 'retry-after': '600' }, content: 'overloaded' }
        : scriptedLatticeJudge(...args),
  });
  const copilots = await startSimServer({});
  try {
    await withWorker('retry-after-cap-judge', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(1, 3),
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 1, maxRetryAfterSeconds: 4 },
        copilots: simCopilots(copilots.url, { A: 'sim-terse' }),
      });
      const runId = `run-retry-after-judge-${Date.now()}`;
      const started = Date.now();
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => Boolean((await handle.query(progressQuery)).waiting?.length), 60_000);
      const status = await cliInProcess(['status', runId, '--json'], env);
      expect(JSON.parse(status.stdout).waiting).toEqual([
        expect.stringMatching(/^the judge: waiting 4 s \(Retry-After\) after HTTP 503, \d s left$/),
      ]);
      const result = await handle.result();
      expect(result.progress.failures).toBe(0);
      expect(Date.now() - started).toBeLessThan(60_000); // two holds of 4 s at most, not 600 s each
      expect((await world.store.judgments(runId)).every((j) => j.status === 'ok')).toBe(true);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
