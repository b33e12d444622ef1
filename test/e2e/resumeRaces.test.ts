import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { pauseUpdate, progressQuery, resumeUpdate } from '../../contract/control';
import type { ResumeRequest } from '../../contract/run';
import type { RunResult } from '../../contract/run';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

/**
 * Resumes racing each other and racing the run's end (issue 30, rows 7, 8 and 19): two `resume --config` at once —
 * one wins, the other is refused with the reason; a judge model changed by `resume --config` is refused; a pause that
 * holds nothing back (every remaining call in flight) is shown as such, the run completes and says so, and resuming
 * the completed run is refused without a second execution.
 */
jest.setTimeout(180_000);

test('two resume --config Updates at once: exactly one is applied, the other refused with the reason; a changed judge model is refused', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  const copilots = await startSimServer({ latencyMs: 200 });
  try {
    await withWorker('resume-race', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const dir = tempDir();
      const fields = {
        protocol: 'lattice',
        queries: latticeGrid(4, 5),
        judge: { baseURL: judge.url, model: 'sim-judge' },
        copilots: simCopilots(copilots.url, { Good: 'sim-terse' }).map((c) => ({ ...c, concurrency: 1 })),
      };
      const config = runConfig(dir, fields);
      const runId = `run-resume-race-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => (await world.store.responses(runId)).length > 0, 60_000);
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'checking' }] });

      const judgeModel = path.join(dir, 'judge-model.json');
      fs.writeFileSync(
        judgeModel,
        JSON.stringify({
          ...fields,
          queries: config.queries,
          output: config.output,
          judge: { ...fields.judge, model: 'sim-judge-2' },
        }),
      );
      const refused = await cliInProcess(['resume', runId, '--config', judgeModel], env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('judge.model (the model that gives the verdicts: sim-judge)');

      // Two replacements sent together, as two users' `resume --config` would be: each names another concurrency.
      const withConcurrency = (n: number): ResumeRequest => ({
        config: {
          ...config,
          copilots: config.copilots.map((c) => ({ ...c, concurrency: n })),
        } as ResumeRequest['config'],
      });
      const outcomes = await Promise.allSettled([
        handle.executeUpdate(resumeUpdate, { args: [withConcurrency(2)] }),
        handle.executeUpdate(resumeUpdate, { args: [withConcurrency(3)] }),
      ]);
      const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      expect(won).toHaveLength(1);
      const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(String(lost.reason?.cause?.message ?? lost.reason?.message)).toMatch(
        /another resume of this run is being applied|the run is not paused/,
      );

      const result = (await handle.result()) as RunResult;
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      const configs = report.control.history.filter((h: { action: string }) => h.action === 'config');
      expect(configs).toEqual([expect.objectContaining({ reason: 'config replaced: copilot Good concurrency' })]);
      expect(report.control.history.filter((h: { action: string }) => h.action === 'resume')).toHaveLength(1);
      // The stored config is the winner's.
      expect(
        ((await world.store.getRun(runId))!.config as { copilots: Array<{ concurrency: number }> }).copilots[0]
          .concurrency,
      ).toBe(won[0] + 2);
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});

test('a pause while the last calls are in flight: status says paused with the calls finishing, the run completes and records why, and resume is refused (exit 2) without a second execution', async () => {
  // The judge answers only once the test has seen the pause, so the last items' judge calls are all in flight when it
  // arrives (a 2.5 s latency could run out under load before the update and two status commands had answered).
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const judge = await startSimServer({
    handler: async (...args) => {
      await released;
      return scriptedLatticeJudge(...args);
    },
  });
  const copilots = await startSimServer({});
  try {
    await withWorker('resume-completed', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const dir = tempDir();
      const fields = {
        protocol: 'lattice',
        queries: latticeGrid(2, 1),
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 4 },
        copilots: simCopilots(copilots.url, { Good: 'sim-terse' }),
      };
      const config = runConfig(dir, fields);
      const runId = `run-resume-completed-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(() => judge.requests.length >= 2, 60_000);
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'checking the spend' }] });

      const paused = JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout);
      expect(paused).toMatchObject({ status: 'paused', paused: { reason: 'checking the spend' } });
      expect(paused.callsInFlight).toBeGreaterThan(0);
      expect((await cliInProcess(['status', runId], env)).stdout).toMatch(
        /call\(s\) in flight finishing \(if they are the last, the run completes\)/,
      );
      release();

      const result = (await handle.result()) as RunResult;
      expect(result.progress.stage).toBe('done');
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.control.history.map((h: { action: string }) => h.action)).toEqual(['pause', 'resume']);
      expect(report.control.history[1].reason).toMatch(
        /^nothing was left to ask: the calls in flight when it was paused \(checking the spend\) finished the run/,
      );
      expect((await handle.query(progressQuery)).paused).toBeNull();

      const firstExecution = (await handle.describe()).runId;
      const fixed = path.join(dir, 'fixed.json');
      fs.writeFileSync(
        fixed,
        JSON.stringify({
          ...fields,
          queries: config.queries,
          output: config.output,
          copilots: fields.copilots.map((c) => ({ ...c, concurrency: 2 })),
        }),
      );
      const resumed = await cliInProcess(['resume', runId, '--config', fixed], env);
      expect(resumed.code).toBe(2);
      expect(resumed.stderr).toContain(`run ${runId} is completed; there is nothing to resume`);
      const after = await handle.describe();
      expect([after.runId, after.status.name]).toEqual([firstExecution, 'COMPLETED']);
      expect(
        ((await world.store.getRun(runId))!.config as { copilots: Array<{ concurrency?: number }> }).copilots[0]
          .concurrency,
      ).not.toBe(2);
    });
  } finally {
    release(); // a failed check before it must not leave the judge's calls hanging
    await judge.close();
    await copilots.close();
  }
});
