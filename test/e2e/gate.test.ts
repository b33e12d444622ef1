import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { planRejudge } from '../../client/rejudge';
import { rejudgeRun } from '../support/rejudge';

/**
 * The simulator's own judge, noisy (sd 0.7 points per score, fresh on every request): "judge-a" judges the source run,
 * "judge-b" re-judges the same responses with other noise, "judge-harsh" too but a point lower on every score of the
 * terse copilot's answers (they alone say "over the next few weeks").
 */
const TERSE_MARK = 'over the next few weeks';
let judge: SimServer;
let copilots: SimServer;
beforeAll(async () => {
  judge = await startSimServer({
    judges: {
      'judge-a': { noise: 0.7, seed: 1 },
      'judge-b': { noise: 0.7, seed: 2 },
      'judge-harsh': { noise: 0.7, seed: 3, favour: { contains: TERSE_MARK, bonus: -1 } },
    },
  });
  copilots = await startSimServer({});
});
afterAll(async () => {
  await judge.close();
  await copilots.close();
});

test('gate: the same responses judged again by a noisy judge pass (exit 0); a copilot a point worse on every dimension fails (exit 1), named alone', async () => {
  await withWorker('gate', async (world) => {
    const dir = tempDir();
    const config = runConfig(dir, {
      protocol: 'lattice',
      queries: latticeGrid(4, 5),
      judge: { baseURL: judge.url, model: 'judge-a', concurrency: 6 },
      copilots: simCopilots(copilots.url, { Sorin: 'sim-thorough', Surfboard: 'sim-terse' }),
    });
    const source = await world.client.workflow.execute(benchmarkRun, {
      taskQueue: world.taskQueue,
      workflowId: `gate-src-${Date.now()}`,
      args: [runInput(config, `gate-src-${Date.now()}`)],
    });
    const noisy = await rejudgeRun(world, source.runId, { judgeModel: 'judge-b' }, `gate-noisy-${Date.now()}`);
    const harsh = await rejudgeRun(world, source.runId, { judgeModel: 'judge-harsh' }, `gate-harsh-${Date.now()}`);
    const env = { JUDGEFLOW_HOME: world.dir, JUDGEFLOW_STORE: world.storeFile };
    const junit = path.join(dir, 'gate.xml');

    const pass = await cliInProcess(
      ['gate', '--baseline', source.runId, '--candidate', noisy.runId, '--json', '--junit', junit],
      env,
    );
    expect({ code: pass.code, stderr: pass.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(pass.stdout)).toMatchObject({ regressions: [], baseline: source.runId, candidate: noisy.runId });
    expect(fs.readFileSync(junit, 'utf8')).toMatch(/<testsuites [^>]*tests="2" failures="0"/);

    const fail = await cliInProcess(
      ['gate', '--baseline', source.runId, '--candidate', harsh.runId, '--json', '--junit', junit],
      env,
    );
    expect(fail.code).toBe(1);
    const body = JSON.parse(fail.stdout);
    expect(body.regressions.map((r: { copilot: string }) => r.copilot)).toEqual(['Surfboard']);
    expect(body.regressions[0].delta).toBeLessThan(-1);
    expect(body.regressions[0].pHolm).toBeLessThan(0.05);
    expect(body.regressions[0].dimensions.length).toBeGreaterThan(0);
    const xml = fs.readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<testcase classname="judgeflow.gate" name="Surfboard"[^>]*><failure type="regression"/);
    expect(xml).not.toMatch(/name="Sorin"[^>]*><failure/);

    // Text output names the regressed copilot; a generous --max-drop lets the same drop pass.
    const text = await cliInProcess(['gate', '--baseline', source.runId, '--candidate', harsh.runId], env);
    expect(text.stdout).toContain('FAIL: Surfboard regressed');
    expect(text.stdout).toContain('note: the runs were judged by different judges (judge-a → judge-harsh)');
    expect(text.stdout).toMatch(/Surfboard: REGRESSION[^\n]*\n  (task|category)\.[^:]+: Δ -/);
    expect(
      (await cliInProcess(['gate', '--baseline', source.runId, '--candidate', harsh.runId, '--max-drop', '20'], env))
        .code,
    ).toBe(0);

    // Bad input: exit 2 with the reason.
    const other = await world.client.workflow.execute(benchmarkRun, {
      taskQueue: world.taskQueue,
      workflowId: `gate-other-${Date.now()}`,
      args: [runInput(runConfig(tempDir(), { ...config, queries: latticeGrid(2, 2) }), `gate-other-${Date.now()}`)],
    });
    const refused = await cliInProcess(['gate', '--baseline', source.runId, '--candidate', other.runId], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('a gate compares runs of one snapshot');
    expect((await cliInProcess(['gate', '--baseline', source.runId, '--candidate', 'no-such-run'], env)).code).toBe(2);
    expect(
      (await cliInProcess(['gate', '--baseline', source.runId, '--candidate', noisy.runId, '--alpha', '2'], env))
        .stderr,
    ).toContain('--alpha must be');
  });
});

test('gate: a cancelled candidate, and one whose every verdict failed, fail the gate (exit 1) with the reason; an unknown run is named by its flag', async () => {
  const broken = await startSimServer({ faults: { rate500: 1 } });
  try {
    await withWorker('gate-broken', async (world) => {
      const config = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: latticeGrid(2, 5),
        judge: { baseURL: judge.url, model: 'judge-a', concurrency: 4 },
        copilots: simCopilots(copilots.url, { Sorin: 'sim-thorough' }),
      });
      const source = await world.client.workflow.execute(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: `gate-bsrc-${Date.now()}`,
        args: [runInput(config, `gate-bsrc-${Date.now()}`)],
      });
      const env = { JUDGEFLOW_HOME: world.dir, JUDGEFLOW_STORE: world.storeFile };

      // Every judge call answered HTTP 500, asked once: a completed run with no verdict.
      const plan = await planRejudge(world.store, {
        sourceRunId: source.runId,
        judgeModel: 'judge-a',
        judgeUrl: broken.url,
        force: true,
      });
      const failedId = `gate-allfailed-${Date.now()}`;
      const failedInput = runInput({ ...plan.config, judge: { ...plan.config.judge!, maxAttempts: 1 } }, failedId, {
        sourceRunId: source.runId,
        reuseJudgments: plan.reuseJudgments,
      });
      await world.client.workflow.execute(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: failedId,
        args: [failedInput],
      });
      const allFailed = await cliInProcess(
        ['gate', '--baseline', source.runId, '--candidate', failedId, '--json'],
        env,
      );
      expect(allFailed.code).toBe(1);
      const body = JSON.parse(allFailed.stdout);
      expect(body).toMatchObject({
        pass: false,
        regressions: [],
        coverage: [{ copilot: 'Sorin', paired: 0, baselineJudged: 10, coverage: 0 }],
      });
      expect(body.problems).toEqual([
        expect.stringContaining('Sorin: the candidate has verdicts for 0 of the 10 queries the baseline judged'),
      ]);

      // A candidate cancelled as it starts: recorded failed (cancelled).
      const cancelledId = `gate-cancelled-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: cancelledId,
        args: [runInput(config, cancelledId)],
      });
      await until(async () => Boolean(await world.store.getRun(cancelledId)), 30_000);
      await handle.cancel();
      await handle.result().catch(() => undefined);
      await until(async () => (await world.store.getRun(cancelledId))?.status === 'failed', 30_000);
      const cancelled = await cliInProcess(['gate', '--baseline', source.runId, '--candidate', cancelledId], env);
      expect(cancelled.code).toBe(1);
      expect(cancelled.stdout).toContain(
        `FAIL: candidate ${cancelledId} is not a completed run: it is failed (cancelled`,
      );
      expect(cancelled.stdout).not.toContain('PASS');

      const unknown = await cliInProcess(['gate', '--baseline', 'no-such-run', '--candidate', source.runId], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('--baseline: run no-such-run is not in the results store');
      expect(unknown.stderr).not.toContain('RUN_A');
    });
  } finally {
    await broken.close();
  }
});
