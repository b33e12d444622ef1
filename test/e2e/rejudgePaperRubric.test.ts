import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { latticeProtocol } from '../../rubrics/lattice';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { runCli } from '../support/cli';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { systemOf } from '../support/judges';
import { rejudgeRun } from '../support/rejudge';
import { copyRubric } from '../support/rubricCopy';

/**
 * A rubric directory of the shape judgeflow shipped before the paper's rubric (no anchors, rules, caps or "not judged
 * here" notes; a system prompt without {{rules}}): what a stored run was judged with, and what a user's edited copy
 * of the old rubric still looks like.
 */
function oldShapeRubric(): string {
  const dir = copyRubric();
  const file = path.join(dir, 'rubric.yaml');
  const data = YAML.parse(fs.readFileSync(file, 'utf8'));
  for (const key of ['levels', 'rules', 'caps']) delete data[key];
  for (const d of [...data.dimensions, data.refusal])
    for (const key of ['anchors', 'notJudgedHere', 'evidenceAngles']) delete d[key];
  fs.writeFileSync(file, YAML.stringify(data));
  fs.writeFileSync(
    path.join(dir, 'judge-system.md'),
    'Grade ONE copilot response from {{min}} (fails) to {{max}} (could not be better).\n\nDimensions:\n{{dimensions}}\n\nAnswer only with JSON.\n',
  );
  return dir;
}

let judge: SimServer;
let copilots: SimServer;
beforeAll(async () => {
  judge = await startSimServer({});
  copilots = await startSimServer({});
});
afterAll(async () => {
  await judge.close();
  await copilots.close();
});

test("a run judged with the pre-paper rubric is re-judged onto the paper's rubric, and compare shows what moved", async () => {
  await withWorker('rejudge-paper', async (world) => {
    const queries = latticeGrid(16, 5).filter((q) => ['T1', 'T6', 'T16'].includes(q.task as string));
    const oldDir = oldShapeRubric();
    const oldVersion = latticeProtocol.loadRubric(oldDir).version;
    const newVersion = latticeProtocol.loadRubric(latticeProtocol.defaultRubricDir).version;
    expect(oldVersion).not.toBe(newVersion);
    const dir = tempDir();
    const config = runConfig(dir, {
      protocol: 'lattice',
      queries,
      rubric: oldDir,
      judge: { baseURL: judge.url, model: 'sim-judge', concurrency: 6 },
      copilots: simCopilots(copilots.url, { Sorin: 'sim-thorough', Surfboard: 'sim-terse' }),
    });
    const runId = `old-${Date.now()}`;
    const source = await world.client.workflow.execute(benchmarkRun, {
      taskQueue: world.taskQueue,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    expect(JSON.parse(fs.readFileSync(source.reportPath, 'utf8')).rubricVersion).toBe(oldVersion);

    // Re-judge onto the shipped rubric: every stored response judged afresh, with the anchors in the prompt.
    const before = judge.requests.length;
    const copilotCalls = copilots.requests.length;
    const rejudged = await rejudgeRun(
      world,
      source.runId,
      { rubricDir: latticeProtocol.defaultRubricDir },
      `paper-${Date.now()}`,
    );
    expect(copilots.requests.length).toBe(copilotCalls);
    const asked = judge.requests.slice(before);
    expect(asked).toHaveLength(queries.length * 2);
    const regular = asked.filter((r) => systemOf(r.body).includes('D1 Intent Fidelity'));
    expect(regular).toHaveLength(queries.filter((q) => q.task !== 'T16').length * 2);
    for (const r of regular)
      expect(systemOf(r.body)).toMatch(/\n {2}9–10: [^\n]+\n {2}8: [^\n]+\n {2}6–7: [^\n]+\n {2}≤5: /);
    const report = JSON.parse(fs.readFileSync(rejudged.reportPath, 'utf8'));
    expect(report).toMatchObject({ sourceRunId: source.runId, rubricVersion: newVersion });
    expect(report.table6.rows.find((r: { task: string }) => r.task === 'T6').name).toBe(
      'Liquidity, Capacity & Execution Feasibility Analysis',
    );

    // compare reads both versions from the store and names the rubric change.
    const env = { JUDGEFLOW_HOME: world.dir, JUDGEFLOW_STORE: world.storeFile, JUDGEFLOW_TASK_QUEUE: world.taskQueue };
    const cli = await runCli(['compare', source.runId, rejudged.runId, '--json'], env);
    expect({ code: cli.code, stderr: cli.code ? cli.stderr : '' }).toEqual({ code: 0, stderr: '' });
    const c = JSON.parse(fs.readFileSync(JSON.parse(cli.stdout).json, 'utf8'));
    expect(JSON.stringify(c)).toContain(oldVersion);
    expect(JSON.stringify(c)).toContain(newVersion);
    expect(c.copilots.Sorin.overall.n).toBe(queries.length);
    // And rubric diff between the two stored versions names the new fields.
    const diff = await runCli(['rubric', 'diff', oldVersion, newVersion], env);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('anchors');
  });
}, 240_000);
