import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
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
    judges: { 'judge-a': { noise: 0.7, seed: 1 }, 'judge-b': { noise: 0.7, seed: 2 }, 'judge-harsh': { noise: 0.7, seed: 3, favour: { contains: TERSE_MARK, bonus: -1 } } },
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
    const source = await world.client.workflow.execute(benchmarkRun, { taskQueue: world.taskQueue, workflowId: `gate-src-${Date.now()}`, args: [runInput(config, `gate-src-${Date.now()}`)] });
    const noisy = await rejudgeRun(world, source.runId, { judgeModel: 'judge-b' }, `gate-noisy-${Date.now()}`);
    const harsh = await rejudgeRun(world, source.runId, { judgeModel: 'judge-harsh' }, `gate-harsh-${Date.now()}`);
    const env = { JUDGEFLOW_HOME: world.dir, JUDGEFLOW_STORE: world.storeFile };
    const junit = path.join(dir, 'gate.xml');

    const pass = await cliInProcess(['gate', '--baseline', source.runId, '--candidate', noisy.runId, '--json', '--junit', junit], env);
    expect({ code: pass.code, stderr: pass.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(pass.stdout)).toMatchObject({ regressions: [], baseline: source.runId, candidate: noisy.runId });
    expect(fs.readFileSync(junit, 'utf8')).toMatch(/<testsuites [^>]*tests="2" failures="0"/);

    const fail = await cliInProcess(['gate', '--baseline', source.runId, '--candidate', harsh.runId, '--json', '--junit', junit], env);
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
    expect((await cliInProcess(['gate', '--baseline', source.runId, '--candidate', harsh.runId, '--max-drop', '20'], env)).code).toBe(0);

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
    expect((await cliInProcess(['gate', '--baseline', source.runId, '--candidate', noisy.runId, '--alpha', '2'], env)).stderr).toContain('--alpha must be');
  });
});
