import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { parseRunConfig } from '../../client/config';
import { cliInProcess } from '../support/cliInProcess';
import { SHARED, tempDir, withWorker } from '../support/harness';
import { simServersForFile } from '../support/sims';

/**
 * The LATTICE reference repository's own files, read as they are: its 240-query JSON array and one
 * filtered_response_<agent>.json per copilot (June's, from the mirror, is one the project ships no copy of), judged
 * jointly in the reference's layout; the export fed to the reference's own build_benchmark.py gives report.json's figures.
 */
const LATTICE = path.join(SHARED, 'datasets', 'lattice');
const QUERIES_240 = path.join(LATTICE, 'filtered_queries_240.json');
const MIRROR = '/work/.mirror/SaharaLabsAI+lattice-benchmark/repo';
const HAS_DATA = fs.existsSync(QUERIES_240) && fs.existsSync(path.join(LATTICE, 'responses'));
const NEEDS = 'needs ../shared/datasets/lattice (the reference queries and answers)';

/** A file of the reference repository's newest commit, from the mirror; null when there is no mirror. */
function fromMirror(file: string): string | null {
  if (!fs.existsSync(MIRROR)) return null;
  try {
    return execFileSync('git', ['-C', MIRROR, 'show', `HEAD:${file}`], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return null;
  }
}

const HAS_PYTHON = (() => {
  try {
    execFileSync('python3', ['--version']);
    return true;
  } catch {
    return false;
  }
})();
const BUILD_BENCHMARK = HAS_DATA && HAS_PYTHON ? fromMirror('scoring/build_benchmark.py') : null;

/** The reference's build_benchmark.py (never committed here) run on a scores file; its benchmark.json. */
function referenceBenchmark(scoresFile: string): any {
  const dir = tempDir('jf-refbench-');
  fs.mkdirSync(path.join(dir, 'scoring'));
  fs.writeFileSync(path.join(dir, 'scoring', 'build_benchmark.py'), BUILD_BENCHMARK!);
  const out = path.join(dir, 'benchmark.json');
  execFileSync('python3', [path.join(dir, 'scoring', 'build_benchmark.py'), '--input', scoresFile, '--output', out]);
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}

/** The reference's figures beside report.json's, to 0.01: leaderboard, per task, per category, per dimension. */
function expectSameFigures(bench: any, report: any): void {
  const copilots = report.copilots as Record<string, any>;
  expect(Object.keys(copilots).sort()).toEqual([...bench.agents].sort());
  for (const row of bench.leaderboard)
    expect(Math.abs(row.avg_score - copilots[row.agent].score)).toBeLessThanOrEqual(0.01);
  for (const t of bench.tasks)
    for (const [agent, v] of Object.entries(t.agents))
      expect(Math.abs((v as number) - copilots[agent].tasks[t.id.split(' ')[0]])).toBeLessThanOrEqual(0.01);
  for (const c of bench.categories)
    for (const [agent, v] of Object.entries(c.agents))
      expect(Math.abs((v as number) - copilots[agent].categories[c.id.split(' ')[0]])).toBeLessThanOrEqual(0.01);
  for (const d of bench.dimensions)
    for (const [agent, v] of Object.entries(d.agents))
      expect(
        Math.abs((v as number) - copilots[agent].dimensions[d.id === 'T16-1' ? 'Refusal' : d.id]),
      ).toBeLessThanOrEqual(0.01);
  expect(bench.tasks).toHaveLength(16);
  expect(bench.dimensions.map((d: any) => d.id)).toEqual(['D1', 'D2', 'D3', 'D4', 'D5', 'D6', 'T16-1']);
}

/** The first joint request showing two answers in the re-ask test gets agent-1 twice and no agent-2; every other request the simulator's own answer. */
let duplicateOnce = false;
const sim = simServersForFile({
  judge: {},
  picky: {
    handler: (body) => {
      const labels = body.response_format?.json_schema?.schema?.properties?.results?.items?.properties?.agent?.enum;
      if (
        !duplicateOnce ||
        body.response_format?.json_schema?.name !== 'lattice_joint_judgment' ||
        labels?.length !== 2
      )
        return undefined;
      duplicateOnce = false;
      const entry = (agent: string) => ({
        agent,
        dimensions: Object.fromEntries(['D1', 'D2', 'D3', 'D4', 'D5', 'D6'].map((d) => [d, { score: 7, reason: 'r' }])),
      });
      return JSON.stringify({ results: [entry('agent-1'), entry('agent-1')] });
    },
  },
});

/** The reference's answer files as a folder copilotsFrom reads: the three in ../shared, and June's from the mirror when there is one. */
function answersDir(): { dir: string; agents: string[] } {
  const dir = tempDir('jf-answers-');
  for (const f of fs.readdirSync(path.join(LATTICE, 'responses')))
    fs.copyFileSync(path.join(LATTICE, 'responses', f), path.join(dir, f));
  const june = fromMirror('data/response/output/1200_queries/filtered_response_june.json');
  if (june) fs.writeFileSync(path.join(dir, 'filtered_response_june.json'), june);
  return {
    dir,
    agents: fs
      .readdirSync(dir)
      .map((f) => f.replace(/^filtered_response_|\.json$/g, ''))
      .sort(),
  };
}

/** The reference's 240 queries: the task label ("T1 Protocol Mechanism Interpretation") of each query text. */
const taskOfQuery = (): Map<string, string> =>
  new Map(
    (JSON.parse(fs.readFileSync(QUERIES_240, 'utf8')) as Array<{ query: string; task: string }>).map((q) => [
      q.query.trim(),
      q.task,
    ]),
  );

/**
 * What every judge request must carry: the query's task under the paper's name (the query file's own label), and every
 * dimension it is graded on with its four bands (9–10, 8, 6–7, ≤5; T16 only its refusal dimension); and, outside the
 * answers themselves, no copilot's name (the answers are the copilots' own words: Sorin's may name Sorin).
 */
function expectPaperPrompt(req: { body: any }, tasks: Map<string, string>, agents: string[]): void {
  const system = req.body.messages.find((m: any) => m.role === 'system').content as string;
  const user = req.body.messages.find((m: any) => m.role === 'user').content as string;
  const query = /(?:\[Query\]|User query:)\n<<<\n([\s\S]*?)\n>>>/.exec(user)?.[1];
  const label = tasks.get((query ?? '').trim());
  expect(label).toBeDefined();
  expect(user).toContain(label!);
  const graded = label!.startsWith('T16 ') ? 1 : 6;
  for (const band of ['9–10', '8', '6–7', '≤5']) expect(system.split(`\n  ${band}: `).length - 1).toBe(graded);
  const frame = JSON.stringify(req.body.messages).replace(/(?:answer:|Copilot response:)\\n<<<\\n[\s\S]*?\\n>>>/g, '');
  for (const agent of agents) expect(frame.toLowerCase()).not.toContain(agent.toLowerCase());
}

(HAS_DATA ? test : test.skip)(
  `the reference's 240 queries × its answer files, judged jointly: one call per query in its layout, no copilot name, export = build_benchmark.py = report.json, import gives the same run${HAS_DATA ? '' : ` [skipped: ${NEEDS}]`}`,
  async () => {
    const { dir, agents } = answersDir();
    await withWorker('lattice-reference', async (world) => {
      const config = parseRunConfig(
        {
          protocol: 'lattice',
          queries: QUERIES_240,
          judge: { baseURL: sim.judge.url, model: 'sim-judge', concurrency: 8 },
          copilotsFrom: { dir },
          copilots: [],
          output: path.join(world.dir, 'runs'),
          lattice: { judging: 'joint' },
        },
        'test config',
        world.dir,
      );
      expect(config.copilots.map((c) => c.name)).toEqual(agents);
      expect(config).not.toHaveProperty('copilotsFrom');
      const before = sim.judge.requests.length;
      const runId = `lattice-ref-${Date.now()}`;
      const result = await world.client.workflow.execute(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.judging.mode).toBe('joint');
      expect(fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8')).toMatch(
        /Judging: joint: one judge call per query/,
      );
      expect(fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.html'), 'utf8')).toMatch(
        /joint: one judge call per query/,
      );

      // One judge call per query, every answer in an [Agent] block under a blinded label, never a copilot's name.
      const requests = sim.judge.requests.slice(before);
      expect(requests).toHaveLength(240);
      const firstLabel: Record<string, number> = {};
      const tasks = taskOfQuery();
      for (const req of requests) {
        expectPaperPrompt(req, tasks, agents);
        const user = req.body.messages.find((m: any) => m.role === 'user').content as string;
        expect(user).toMatch(/^\[Task\]\n<<<\nT\d+ /);
        const labels = [...user.matchAll(/^\[Agent\]\nname: (.*)$/gm)].map((m) => m[1]);
        expect(labels).toEqual(agents.map((_, i) => `agent-${i + 1}`));
        expect(req.body.response_format.json_schema.schema.properties.results.items.properties.agent.enum).toEqual(
          labels,
        );
      }
      // Balanced order: every copilot is shown first about equally often.
      const verdicts = await world.store.judgments(result.runId);
      for (const v of verdicts) if (v.position === 1) firstLabel[v.copilot] = (firstLabel[v.copilot] ?? 0) + 1;
      for (const agent of agents) expect(Math.abs(firstLabel[agent] - 240 / agents.length)).toBeLessThanOrEqual(1);
      expect(verdicts.filter((v) => v.status === 'ok')).toHaveLength(240 * agents.length);

      // The reference's scores file, read by the reference's own build_benchmark.py, gives report.json's figures.
      const env = { JUDGEFLOW_HOME: world.dir, JUDGEFLOW_STORE: world.storeFile };
      const scoresFile = path.join(world.dir, 'scores_240.json');
      const exported = await cliInProcess(
        ['export', result.runId, '--format', 'lattice-scores', '--out', scoresFile],
        env,
      );
      expect(exported.stderr).toBe('');
      expect(exported.code).toBe(0);
      const scores = JSON.parse(fs.readFileSync(scoresFile, 'utf8'));
      expect(Object.keys(scores).sort()).toEqual([
        'agent_files',
        'instructions_path',
        'model',
        'queries_path',
        'results',
        'summary',
        'total_scored',
      ]);
      expect(scores.total_scored).toBe(240);
      expect(scores.results[0]).toMatchObject({
        qid: 0,
        task_id: 'T1 Protocol Mechanism Interpretation',
        category: 'C1 Basic',
      });
      const t16 = scores.results.find((e: any) => e.task_id.startsWith('T16'));
      expect(Object.keys(t16.results[0].dimensions)).toEqual(['T16-1']);
      expect(t16.results[0].total_score).toBe(t16.results[0].dimensions['T16-1'].score * 10);
      if (BUILD_BENCHMARK) expectSameFigures(referenceBenchmark(scoresFile), report);
      else
        console.log('Skipping the build_benchmark.py comparison: needs python3 and the reference mirror at ' + MIRROR);

      // Imported back, the scores file is a run with the same figures, usable by gate.
      const imported = await cliInProcess(
        [
          'import',
          'lattice-scores',
          scoresFile,
          '--queries',
          QUERIES_240,
          '--answers',
          dir,
          '--out',
          path.join(world.dir, 'imported'),
        ],
        env,
      );
      expect(imported.stderr).not.toMatch(/failed|error/i); // warnings only: the rubric's task names until they are the paper's
      expect(imported.code).toBe(0);
      const importedId = /Imported run (\S+):/.exec(imported.stdout)![1];
      const importedReport = JSON.parse(fs.readFileSync(/Report: (.*)$/m.exec(imported.stdout)![1], 'utf8'));
      expect(importedReport.judging.mode).toBe('imported');
      for (const agent of agents) {
        expect(importedReport.copilots[agent].score).toBeCloseTo(report.copilots[agent].score, 3);
        expect(importedReport.copilots[agent].tasks).toEqual(
          Object.fromEntries(
            Object.entries(report.copilots[agent].tasks).map(([k, v]) => [k, expect.closeTo(v as number, 3)]),
          ),
        );
      }
      const gate = await cliInProcess(['gate', '--baseline', result.runId, '--candidate', importedId, '--json'], env);
      expect(gate.code).toBe(0);
      const compared = await cliInProcess(['compare', result.runId, importedId, '--json'], env);
      expect(compared.code).toBe(0);
      const trend = await cliInProcess(['trend', '--runs', `${result.runId},${importedId}`, '--json'], env);
      expect(trend.code).toBe(0);
      expect(trend.stdout).toContain(importedId);
      const again = await cliInProcess(['import', 'lattice-scores', scoresFile, '--queries', QUERIES_240], env);
      expect(again.stdout).toContain(`Imported run ${importedId}`);
    });
  },
  600_000,
);

(HAS_DATA ? test : test.skip)(
  `the same files judged independently (the paper's mode): one call per answer, each carrying the paper's task name and anchors and no copilot name; export = build_benchmark.py = report.json${HAS_DATA ? '' : ` [skipped: ${NEEDS}]`}`,
  async () => {
    const { dir, agents } = answersDir();
    await withWorker('lattice-reference-independent', async (world) => {
      const config = parseRunConfig(
        {
          protocol: 'lattice',
          queries: QUERIES_240,
          judge: { baseURL: sim.judge.url, model: 'sim-judge', concurrency: 8 },
          copilotsFrom: { dir },
          copilots: [],
          output: path.join(world.dir, 'runs'),
        },
        'test config',
        world.dir,
      );
      const before = sim.judge.requests.length;
      const runId = `lattice-ref-independent-${Date.now()}`;
      const result = await world.client.workflow.execute(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.judging.mode).toBe('independent');
      const requests = sim.judge.requests.slice(before);
      expect(requests).toHaveLength(240 * agents.length);
      const tasks = taskOfQuery();
      for (const req of requests) {
        expectPaperPrompt(req, tasks, agents);
        expect(JSON.stringify(req.body.messages)).not.toContain('[Agent]'); // one answer per call
      }
      const scoresFile = path.join(world.dir, 'scores_240_independent.json');
      const exported = await cliInProcess(['export', result.runId, '--format', 'lattice-scores', '--out', scoresFile], {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
      });
      expect(exported.code).toBe(0);
      expect(JSON.parse(fs.readFileSync(scoresFile, 'utf8')).total_scored).toBe(240);
      if (BUILD_BENCHMARK) expectSameFigures(referenceBenchmark(scoresFile), report);
      else
        console.log('Skipping the build_benchmark.py comparison: needs python3 and the reference mirror at ' + MIRROR);
    });
  },
  600_000,
);

const PUBLISHED_SCORES = HAS_DATA && HAS_PYTHON ? fromMirror('data/scores_1200.json') : null;
(PUBLISHED_SCORES && BUILD_BENCHMARK ? test : test.skip)(
  `the reference's published scores_1200.json, imported: report.json's figures are build_benchmark.py's${PUBLISHED_SCORES && BUILD_BENCHMARK ? '' : ' [skipped: data/scores_1200.json is not in the mirror (too large for the stored copy) or python3 is missing]'}`,
  async () => {
    const dir = tempDir('jf-published-');
    const scoresFile = path.join(dir, 'scores_1200.json');
    fs.writeFileSync(scoresFile, PUBLISHED_SCORES!);
    const env = { JUDGEFLOW_HOME: dir, JUDGEFLOW_STORE: path.join(dir, 'results.db') };
    const imported = await cliInProcess(
      [
        'import',
        'lattice-scores',
        scoresFile,
        '--queries',
        path.join(LATTICE, 'filtered_queries_1200.json'),
        '--out',
        dir,
      ],
      env,
    );
    expect(imported.code).toBe(0);
    const report = JSON.parse(fs.readFileSync(/Report: (.*)$/m.exec(imported.stdout)![1], 'utf8'));
    expectSameFigures(referenceBenchmark(scoresFile), report);
  },
  300_000,
);

test('joint: a duplicated label is an invalid answer, re-asked; a query a copilot did not answer is judged with the others and the missing one recorded with its reason', async () => {
  const dir = tempDir('jf-joint-');
  const queries = ['How does Aave liquidate?', 'Is Lido staking safe?', 'What moves ETH funding rates?'].map(
    (text, i) => ({ id: `q${i}`, text, task: 'T1', category: 'C1' }),
  );
  fs.writeFileSync(path.join(dir, 'q.jsonl'), queries.map((q) => JSON.stringify(q)).join('\n'));
  fs.writeFileSync(
    path.join(dir, 'filtered_response_alpha.json'),
    JSON.stringify(queries.map((q) => ({ query: q.text, response: `Alpha on ${q.text}: risk because liquidity.` }))),
  );
  fs.writeFileSync(
    path.join(dir, 'filtered_response_beta.json'),
    JSON.stringify(queries.slice(1).map((q) => ({ query: q.text, response: `Beta: ${q.text}` }))),
  );
  await withWorker('lattice-joint-reask', async (world) => {
    const config = parseRunConfig(
      {
        protocol: 'lattice',
        queries: 'q.jsonl',
        judge: { baseURL: sim.picky.url, model: 'sim-judge', concurrency: 1 },
        copilotsFrom: { dir: '.' },
        copilots: [],
        output: 'runs',
        lattice: { judging: 'joint' },
      },
      'test config',
      dir,
    );
    const before = sim.picky.requests.length;
    duplicateOnce = true;
    const runId = `lattice-reask-${Date.now()}`;
    const result = await world.client.workflow.execute(benchmarkRun, {
      taskQueue: world.taskQueue,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    const requests = sim.picky.requests.slice(before);
    expect(requests).toHaveLength(queries.length + 1); // one per query, and the re-ask
    expect(requests.map((r) => JSON.stringify(r.body.messages)).join('\n')).toMatch(
      /exactly once: no entry for agent-2; more than one entry for agent-1/,
    );
    const verdicts = await world.store.judgments(result.runId);
    expect(verdicts.filter((v) => v.status === 'ok')).toHaveLength(5);
    expect(verdicts.find((v) => v.queryId === 'q0')).toMatchObject({ copilot: 'alpha', position: 1 });
    expect(Math.max(...verdicts.map((v) => v.attempts))).toBe(2);
    const missing = await world.store.getResponse(result.runId, 'q0', 'beta');
    expect(missing).toMatchObject({ status: 'missing' });
    expect(missing!.errorMessage).toMatch(/has no answer whose query matches query q0/);
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    expect(report.copilots.beta.n).toBe(2);
    expect(report.cost.total.calls).toBe(requests.length); // reading an answers file is no call
    expect(report.judging.mode).toBe('joint');
  });
}, 300_000);
