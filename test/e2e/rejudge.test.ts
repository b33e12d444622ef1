import fs from 'node:fs';
import path from 'node:path';
import { planRejudge } from '../../client/rejudge';
import { runInput } from '../../client/startRun';
import type { ResultsStore } from '../../core/model/store';
import { latticeProtocol } from '../../rubrics/lattice';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import { runCli } from '../support/cli';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker, type TestWorld } from '../support/harness';
import { gradedText, hashInt, systemOf } from '../support/judges';
import { rejudgeRun } from '../support/rejudge';
import { copyRubric, D2_NEW, D2_OLD, editOnce } from '../support/rubricCopy';

/**
 * The judge's scores depend on the system prompt it sees (so a rubric text change changes them) and on the response;
 * model "judge-plus2" adds 2 to every score of the responses listed in `plusTwo` (the known injected difference).
 * Scores stay within 0..10: base 0..8, plus at most 2.
 */
const plusTwo = new Set<string>();
const baseScore = (system: string, text: string, dim: string) => hashInt(`${hashInt(system)}|${text}|${dim}`) % 9;
function judgeAnswer(body: any): string | undefined {
  if (body.response_format?.type !== 'json_schema') return undefined;
  const dims = Object.keys(body.response_format.json_schema.schema.properties);
  const text = gradedText(body);
  const bump = body.model === 'judge-plus2' && plusTwo.has(text) ? 2 : 0;
  const system = systemOf(body);
  return JSON.stringify(
    Object.fromEntries(
      dims.map((d) => [
        d,
        {
          score: baseScore(system, text, d) + bump,
          rationale: `${body.model} on ${d}: prompt ${hashInt(system) % 1000}`,
        },
      ]),
    ),
  );
}

let judge: SimServer;
let copilots: SimServer;
// One worker and store for the whole file (each test starts its own runs); the source run is shared.
let world: TestWorld;
let release: () => void;
let workerDone: Promise<void>;
let source: RunResult;
beforeAll(async () => {
  judge = await startSimServer({ handler: judgeAnswer });
  copilots = await startSimServer({});
  await new Promise<void>((ready) => {
    workerDone = withWorker('rejudge', (w) => {
      world = w;
      ready();
      return new Promise<void>((r) => (release = r));
    });
  });
  source = await sourceRun(world, tempDir());
});
afterAll(async () => {
  release?.();
  await workerDone;
  await judge.close();
  await copilots.close();
});

// 15 queries (T1, T2 and the refusal task T16 × 5 categories) × 2 copilots = 30 stored responses.
const QUERIES = latticeGrid(16, 5).filter((q) => ['T1', 'T2', 'T16'].includes(q.task as string));
const RESPONSES = QUERIES.length * 2;

async function sourceRun({ client, taskQueue }: TestWorld, dir: string): Promise<RunResult> {
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries: QUERIES,
    judge: { baseURL: judge.url, model: 'judge-a', concurrency: 6 },
    copilots: simCopilots(copilots.url, { Sorin: 'sim-thorough', Surfboard: 'sim-terse' }),
  });
  return client.workflow.execute(benchmarkRun, {
    taskQueue,
    workflowId: `rejudge-src-${Date.now()}`,
    args: [runInput(config, `src-${Date.now()}`)],
  });
}

const readReport = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
const reportFiles = (reportPath: string) =>
  ['report.json', 'results.csv', 'report.md'].map((f) => path.join(path.dirname(reportPath), f));
const cliEnv = (world: TestWorld) => ({
  JUDGEFLOW_HOME: world.dir,
  JUDGEFLOW_STORE: world.storeFile,
  JUDGEFLOW_TASK_QUEUE: world.taskQueue,
});

async function expectSameScores(store: ResultsStore, runA: string, runB: string) {
  const strip = async (runId: string) =>
    (await store.judgments(runId)).map((j) => [j.queryId, j.copilot, j.status, j.scores, j.total]);
  expect(await strip(runB)).toEqual(await strip(runA));
}

test('re-judging after a rubric text change: no copilot call, one judge call per stored response, new version in a new report, old report untouched', async () => {
  const before = new Map(reportFiles(source.reportPath).map((f) => [f, fs.readFileSync(f)]));
  const oldReport = readReport(source.reportPath);
  const stored = (await world.store.responses(source.runId)).filter((r) => r.status === 'ok');
  expect(stored).toHaveLength(RESPONSES);

  const rubricDir = copyRubric();
  editOnce(path.join(rubricDir, 'rubric.yaml'), D2_OLD, D2_NEW);
  const newVersion = latticeProtocol.loadRubric(rubricDir).version;
  expect(newVersion).not.toBe(oldReport.rubricVersion);

  // Through the real CLI (detached: the worker of this test runs it).
  const copilotCalls = copilots.requests.length;
  const judgeCalls = judge.requests.length;
  const cli = await runCli(['rejudge', source.runId, '--rubric', rubricDir, '--detach', '--json'], cliEnv(world));
  expect({ code: cli.code, stderr: cli.code ? cli.stderr : '' }).toEqual({ code: 0, stderr: '' });
  const started = JSON.parse(cli.stdout);
  expect(started).toMatchObject({ sourceRunId: source.runId, rubricVersion: newVersion, reuseJudgments: false });
  const result: RunResult = await world.client.workflow.getHandle(started.runId).result();

  expect(copilots.requests.length).toBe(copilotCalls);
  const asked = judge.requests.slice(judgeCalls);
  expect(asked.map((r) => gradedText(r.body)).sort()).toEqual(stored.map((r) => r.text).sort());
  // The judge saw the new D2 text on every non-refusal response (T16 is graded on Refusal alone).
  expect(asked.filter((r) => systemOf(r.body).includes(D2_NEW))).toHaveLength(RESPONSES - 10);
  expect(asked.some((r) => systemOf(r.body).includes(D2_OLD))).toBe(false);

  const report = readReport(result.reportPath);
  expect(report).toMatchObject({
    runId: started.runId,
    sourceRunId: source.runId,
    rubricVersion: newVersion,
    judge: { model: 'judge-a', rubricVersion: newVersion },
  });
  expect(fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8')).toContain(newVersion);
  expect(path.dirname(result.reportPath)).not.toBe(path.dirname(source.reportPath));

  // Every new judgment is exactly what the judge answered to the prompt it saw.
  for (const r of asked) {
    const text = gradedText(r.body);
    // Two copilots may answer two queries alike, so the query text in the prompt picks the response.
    const queryText = String(r.body.messages.find((m: any) => m.role === 'user').content).match(
      /User query:\n<<<\n([\s\S]*?)\n>>>/,
    )![1];
    const queryId = QUERIES.find((q) => q.text === queryText)!.id;
    const response = stored.find((s) => s.text === text && s.queryId === queryId)!;
    const j = (await world.store.getJudgment(started.runId, response.queryId, response.copilot, newVersion))!;
    for (const [d, score] of Object.entries(j.scores!)) expect(score).toBe(baseScore(systemOf(r.body), text, d));
  }
  // The report differs exactly where the answers differ: T16 prompts did not change, T1/T2 prompts did.
  for (const c of ['Sorin', 'Surfboard']) {
    expect(report.copilots[c].tasks.T16).toBe(oldReport.copilots[c].tasks.T16);
    expect(report.copilots[c].dimensions.Refusal).toBe(oldReport.copilots[c].dimensions.Refusal);
    expect(report.copilots[c].tasks.T1).not.toBe(oldReport.copilots[c].tasks.T1);
    expect(report.copilots[c].score).not.toBe(oldReport.copilots[c].score);
  }

  // The source run's files are byte for byte what they were.
  for (const [file, bytes] of before) expect(fs.readFileSync(file).equals(bytes)).toBe(true);

  // runs lists both, newest first, the re-judge linked to its source.
  const runs = JSON.parse((await cliInProcess(['runs', '--json'], cliEnv(world))).stdout);
  const ids = runs.map((r: any) => r.runId);
  expect(ids.indexOf(started.runId)).toBeLessThan(ids.indexOf(source.runId));
  expect(ids.indexOf(source.runId)).toBeGreaterThan(-1);
  expect(runs[ids.indexOf(started.runId)]).toMatchObject({
    protocol: 'lattice',
    sourceRunId: source.runId,
    rubricVersion: newVersion,
    judgeModel: 'judge-a',
    status: 'completed',
  });
  expect(Object.keys(runs[ids.indexOf(started.runId)].scores)).toEqual(expect.arrayContaining(['Sorin', 'Surfboard']));

  // rubric diff between the two runs names the one changed field.
  const diff = JSON.parse(
    (await cliInProcess(['rubric', 'diff', source.runId, started.runId, '--json'], cliEnv(world))).stdout,
  );
  expect(diff.changes.map((c: any) => c.path)).toEqual(['data.dimensions[D2].description']);
});

test('re-judging with an unchanged rubric and judge is free; --force pays again; bad input fails before anything starts', async () => {
  const copilotCalls = copilots.requests.length;

  let judgeCalls = judge.requests.length;
  const free = await rejudgeRun(world, source.runId, {}, `free-${Date.now()}`);
  expect(judge.requests.length - judgeCalls).toBe(0);
  expect(readReport(free.reportPath)).toMatchObject({
    sourceRunId: source.runId,
    rubricVersion: readReport(source.reportPath).rubricVersion,
  });
  await expectSameScores(world.store, source.runId, free.runId);
  expect(readReport(free.reportPath).copilots).toEqual(readReport(source.reportPath).copilots);

  judgeCalls = judge.requests.length;
  const forced = await rejudgeRun(world, source.runId, { force: true }, `forced-${Date.now()}`);
  expect(judge.requests.length - judgeCalls).toBe(RESPONSES);
  await expectSameScores(world.store, source.runId, forced.runId);
  expect(copilots.requests.length).toBe(copilotCalls);

  const runsBefore = (await world.store.listRuns()).length;
  await expect(planRejudge(world.store, { sourceRunId: 'no-such-run' })).rejects.toThrow(
    /run no-such-run is not in the results store/,
  );
  await expect(planRejudge(world.store, { sourceRunId: source.runId, rubricDir: tempDir() })).rejects.toThrow(
    /has no rubric.yaml/,
  );
  await expect(planRejudge(world.store, { sourceRunId: source.runId, judgeUrl: 'not a url' })).rejects.toThrow(
    /judge\.baseURL/,
  );
  const bad = await cliInProcess(['rejudge', source.runId, '--rubric', '/nonexistent/rubric'], cliEnv(world));
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/judgeflow rejudge: rubric directory \/nonexistent\/rubric has no rubric.yaml/);
  expect(await world.store.listRuns()).toHaveLength(runsBefore); // nothing half-started
});

test('compare finds a known injected difference (+2 on every score of one copilot) significant, and a zero difference not', async () => {
  for (const r of await world.store.responses(source.runId)) if (r.copilot === 'Sorin') plusTwo.add(r.text!);
  const bumped = await rejudgeRun(world, source.runId, { judgeModel: 'judge-plus2' }, `plus2-${Date.now()}`);
  const same = await rejudgeRun(world, source.runId, {}, `same-${Date.now()}`);

  const cli = await runCli(['compare', source.runId, bumped.runId, '--json'], cliEnv(world));
  expect({ code: cli.code, stderr: cli.code ? cli.stderr : '' }).toEqual({ code: 0, stderr: '' });
  const files = JSON.parse(cli.stdout);
  expect(path.dirname(files.json)).toBe(path.join(path.dirname(bumped.reportPath), `compare-${source.runId}`));
  const c = JSON.parse(fs.readFileSync(files.json, 'utf8'));
  const sorin = c.copilots.Sorin;
  // LATTICE: +2 on every dimension is +20 on the 0–100 total (weights sum to 100, /10); Refusal ×10 likewise.
  expect(sorin.overall.n).toBe(QUERIES.length);
  expect(sorin.overall.delta).toBeCloseTo(20, 9);
  expect(sorin.overall.significant).toBe(true);
  for (const d of ['D1', 'D2', 'D3', 'D4', 'D5', 'D6'])
    expect(sorin.dimensions[d]).toMatchObject({ n: 10, delta: 2, significant: true });
  // Five refusal queries cannot reach p < 0.05 with an exact sign-flip test (best p = 2/32).
  expect(sorin.dimensions.Refusal).toMatchObject({ n: 5, delta: 2, significant: false });
  expect(sorin.groups.task.T1.delta).toBeCloseTo(20, 9);
  expect(c.copilots.Surfboard.overall).toMatchObject({ n: QUERIES.length, delta: 0, pValue: 1, significant: false });
  expect(c.movers).toHaveLength(10);
  expect(c.movers.every((m: any) => m.copilot === 'Sorin' && Math.abs(m.delta - 20) < 1e-9)).toBe(true);
  expect(c.movers[0].a.rationales.D1 ?? c.movers[0].a.rationales.Refusal).toMatch(/^judge-a on/);
  expect(c.movers[0].b.rationales.D1 ?? c.movers[0].b.rationales.Refusal).toMatch(/^judge-plus2 on/);
  expect(c.judgeChanged).toBe(true);
  const ranks = [sorin, c.copilots.Surfboard];
  expect(ranks.map((x) => x.rankA).sort()).toEqual([1, 2]);
  expect(sorin.rankB).toBe(sorin.scoreB > c.copilots.Surfboard.scoreB ? 1 : 2);
  const md = fs.readFileSync(files.markdown, 'utf8');
  expect(md).toContain('| Sorin |');
  expect(md).toContain('## Most moved (10)');

  expect(
    (await cliInProcess(['compare', source.runId, same.runId, '--out', path.join(world.dir, 'cmp')], cliEnv(world)))
      .code,
  ).toBe(0);
  const zero = JSON.parse(fs.readFileSync(path.join(world.dir, 'cmp', 'compare.json'), 'utf8'));
  for (const x of Object.values<any>(zero.copilots)) expect(x.overall).toMatchObject({ delta: 0, significant: false });
  expect(zero.movers).toEqual([]);
});

test('a rubric change that only moves a weight re-scores the stored verdicts with zero judge calls, automatically, and says so', async () => {
  const rubric = copyRubric('lattice');
  // C1's weights move from D2 to D1; nothing the judge sees changes.
  editOnce(path.join(rubric, 'rubric.yaml'), 'C1: { D1: 15, D2: 25,', 'C1: { D1: 25, D2: 15,');
  const plan = await planRejudge(world.store, { sourceRunId: source.runId, rubricDir: rubric });
  expect(plan).toMatchObject({ rubricChanged: true, rubricChange: 'aggregate-only', reuseJudgments: true });
  const dry = await cliInProcess(['rejudge', source.runId, '--rubric', rubric, '--dry-run', '--json'], cliEnv(world));
  expect(dry.code).toBe(0);
  expect(dry.stdout).toContain('"rubricChange":"aggregate-only"');
  expect(dry.stdout + dry.stderr).toMatch(/re-scored with no judge call/);

  const judgeCalls = judge.requests.length;
  const rescored = await rejudgeRun(world, source.runId, { rubricDir: rubric }, `reweighted-${Date.now()}`);
  expect(judge.requests.length - judgeCalls).toBe(0);
  // Same dimension scores; the new weights give the totals: C1's change moves 10 points of weight from D2 to D1.
  const before = new Map((await world.store.judgments(source.runId)).map((j) => [`${j.queryId}/${j.copilot}`, j]));
  const after = await world.store.judgments(rescored.runId);
  expect(after).toHaveLength(RESPONSES);
  let moved = 0;
  for (const j of after) {
    const old = before.get(`${j.queryId}/${j.copilot}`)!;
    expect(j.scores).toEqual(old.scores);
    const c1 = j.queryId.endsWith('c1') && !j.queryId.startsWith('t16');
    const expected = c1 ? old.total! + (10 * (j.scores!.D1 - j.scores!.D2)) / 10 : old.total;
    expect(j.total).toBeCloseTo(expected!, 9);
    if (j.total !== old.total) moved++;
  }
  expect(moved).toBeGreaterThan(0);
});
