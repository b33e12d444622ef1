/**
 * `judgeflow bench --only lattice-files`: the LATTICE reference's published files as they are, 1,200 queries × the
 * three answer files in ../shared, judged independently and jointly against the simulated judge at 400 ms a call; and
 * the side-by-side setting of issue 29 (1,200 × 4 copilots, 12 calls at a time, joint), June's answers from the
 * reference mirror. What the mode changes on the same answers: calls, tokens, cost, agreement of the scores, ranks.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseCsv } from '../core/io/csv';
import { pearson } from '../core/stats/stats';
import { spawn } from 'node:child_process';
import { startSimServer } from '../sim/server';
import { measureRun, type RunFigures, type RunScenario } from './benchRuns';
import { simSpanFigures, simSpanLine, watchEventLoop } from './benchSim';

const REPO = path.resolve(__dirname, '..');
/** The read-only data beside the checkout (JUDGEFLOW_TEST_SHARED when the checkout is a worktree one level deeper). */
const SHARED = process.env.JUDGEFLOW_TEST_SHARED ?? path.resolve(REPO, '..', 'shared');
/** A bare git copy of SaharaLabsAI/lattice-benchmark (JUDGEFLOW_LATTICE_MIRROR): June's answers and the reference harness. */
const MIRROR = process.env.JUDGEFLOW_LATTICE_MIRROR ?? '/work/.mirror/SaharaLabsAI+lattice-benchmark/repo';
/** The Python that runs the reference harness (it needs its requirements.txt: openai, python-dotenv). */
const PYTHON = process.env.JUDGEFLOW_BENCH_PYTHON ?? 'python3';

interface LatticeFilesRow {
  figures: RunFigures;
  scores: Record<string, number>;
  totals: Map<string, number>;
  tokens: { prompt: number; completion: number };
  costUsd: number | null;
}

/** The folder of this bench's answer folders, queries and harness copies (benchLatticeFiles removes it at its end). */
let scratch: string | undefined;
const scratchDir = (prefix: string) =>
  fs.mkdtempSync(path.join((scratch ??= fs.mkdtempSync(path.join(os.tmpdir(), 'jf-bench-lattice-'))), prefix));

/** A folder of the reference's answer files: the three in ../shared, and June's from the mirror when `withJune`. */
function answersDir(withJune: boolean): { dir: string; copilots: number } | null {
  const shared = path.join(SHARED, 'datasets', 'lattice', 'responses');
  if (!fs.existsSync(shared)) return null;
  const dir = scratchDir('answers-');
  for (const f of fs.readdirSync(shared)) fs.symlinkSync(path.join(shared, f), path.join(dir, f));
  if (withJune) {
    try {
      fs.writeFileSync(
        path.join(dir, 'filtered_response_june.json'),
        execFileSync(
          'git',
          ['-C', MIRROR, 'show', 'HEAD:data/response/output/1200_queries/filtered_response_june.json'],
          { maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
        ),
      );
    } catch {
      return null;
    }
  }
  return { dir, copilots: fs.readdirSync(dir).length };
}

async function runRow(
  name: string,
  judging: 'independent' | 'joint',
  withJune: boolean,
  judgeConcurrency: number,
  log: (line: string) => void,
  queries?: number,
): Promise<LatticeFilesRow | string> {
  const answers = answersDir(withJune);
  const file = path.join(SHARED, 'datasets', 'lattice', 'filtered_queries_1200.json');
  if (!answers || !fs.existsSync(file))
    return `${name}: skipped — needs ${withJune ? "the reference mirror (June's answers) and " : ''}../shared/datasets/lattice (filtered_queries_1200.json, responses/)`;
  let queriesFile = file;
  if (queries) {
    queriesFile = path.join(answers.dir, '..', `jf-bench-queries-${queries}-${process.pid}.json`);
    fs.writeFileSync(
      queriesFile,
      JSON.stringify((JSON.parse(fs.readFileSync(file, 'utf8')) as unknown[]).slice(0, queries)),
    );
  }
  const count = queries ?? (JSON.parse(fs.readFileSync(file, 'utf8')) as unknown[]).length;
  const s: RunScenario = {
    name,
    kind: 'lattice-files',
    queries: count,
    copilots: answers.copilots,
    latencyMs: 400,
    copilotConcurrency: 1,
    judgeConcurrency,
    latticeFiles: { queries: queriesFile, answersDir: answers.dir, judging },
  };
  log(
    `\nrunning ${name}: ${count} queries × ${answers.copilots} answer files, judged ${judging}, 400 ms per judge call, ${judgeConcurrency} at a time …`,
  );
  const figures = await measureRun(s, log);
  log(timelineLine(figures));
  log(simSpanLine(name, figures.sim, figures.loopDelay));
  const report = JSON.parse(fs.readFileSync(figures.reportPath!, 'utf8'));
  const [header, ...rows] = parseCsv(
    fs.readFileSync(path.join(path.dirname(figures.reportPath!), 'results.csv'), 'utf8'),
    'results.csv',
  );
  const [q, c, t] = ['query_id', 'copilot', 'total'].map((k) => header.indexOf(k));
  const totals = new Map(rows.filter((r) => r[t] !== '').map((r) => [`${r[q]}\u0000${r[c]}`, Number(r[t])]));
  const scores = Object.fromEntries(
    Object.entries(report.copilots as Record<string, { score: number }>).map(([k, v]) => [k, v.score]),
  );
  const judge = Object.values(
    report.cost.judge as Record<
      string,
      { promptTokens: number; completionTokens: number; estimatedCostUsd: number | null }
    >,
  )[0];
  return {
    figures,
    scores,
    totals,
    tokens: { prompt: judge.promptTokens, completion: judge.completionTokens },
    costUsd: judge.estimatedCostUsd,
  };
}

/** Where a run's wall time went: to the first judge call, judging, and after the last judge answer; each activity type's span. */
export function timelineLine(f: RunFigures): string {
  const spans = Object.entries(f.activities ?? {})
    .sort((a, b) => a[1].fromS - b[1].fromS)
    .map(([k, v]) => `${k} ×${v.count} ${v.fromS.toFixed(1)}–${v.toS.toFixed(1)} s`)
    .join('; ');
  const first = f.firstJudgeS ?? 0;
  const last = f.lastJudgeS ?? 0;
  return `${f.scenario.name}: first judge call at ${first.toFixed(2)} s, last answer at ${last.toFixed(1)} s, done at ${f.wallS.toFixed(1)} s (${(f.wallS - last).toFixed(1)} s after judging${f.reportS !== undefined ? `, writeReport ${f.reportS.toFixed(2)} s` : ''}); worker CPU ${f.workerCpuMs.toFixed(0)} ms, ${(f.workerCpuMs / Math.max(1, f.llmCalls)).toFixed(1)} ms per judge call (${f.judgingCpuMsPerCall?.toFixed(1) ?? '–'} ms while judging)${f.gaps ? `; a judge slot idle ${f.gaps.betweenUnitsMs.toFixed(0)} ms on average between calls` : ''}. Activities: ${spans}`;
}

const ranks = (scores: Record<string, number>) =>
  Object.fromEntries(
    Object.keys(scores)
      .sort((a, b) => scores[b] - scores[a])
      .map((k, i) => [k, i + 1]),
  );

/** The two modes on the same answers: per-answer agreement of the 0–100 totals, and each copilot's score and rank. */
export function modeComparison(independent: LatticeFilesRow, joint: LatticeFilesRow): string[] {
  const keys = [...independent.totals.keys()].filter((k) => joint.totals.has(k));
  const a = keys.map((k) => independent.totals.get(k)!);
  const b = keys.map((k) => joint.totals.get(k)!);
  const diffs = a.map((x, i) => Math.abs(x - b[i]));
  const within = (d: number) => `${((100 * diffs.filter((x) => x <= d).length) / diffs.length).toFixed(1)}%`;
  const ri = ranks(independent.scores);
  const rj = ranks(joint.scores);
  return [
    `answers judged in both modes: ${keys.length}; Pearson r of the totals ${pearson(a, b).toFixed(3)}; mean |difference| ${(diffs.reduce((s, x) => s + x, 0) / diffs.length).toFixed(2)} points; within 5 points ${within(5)}, within 10 ${within(10)}`,
    '',
    '| copilot | independent score (rank) | joint score (rank) | change |',
    '| --- | --- | --- | --- |',
    ...Object.keys(independent.scores)
      .sort()
      .map(
        (k) =>
          `| ${k} | ${independent.scores[k].toFixed(2)} (${ri[k]}) | ${joint.scores[k].toFixed(2)} (${rj[k]}) | ${(joint.scores[k] - independent.scores[k]).toFixed(2)}${ri[k] !== rj[k] ? `, rank ${ri[k]} → ${rj[k]}` : ''} |`,
      ),
  ];
}

/** The reference harness's run: its wall time (process start to exit), its judge calls' span, and what it scored. */
interface ReferenceRun {
  /** scoring/batch.py: process start to exit (the scores, and its own per-agent summary). */
  wallS: number;
  /** scoring/build_benchmark.py on batch.py's scores: the leaderboard, per-task, per-category and per-dimension summaries judgeflow's report holds. */
  buildS: number;
  /** batch.py's start to its first judge request (s). */
  firstJudgeS: number;
  judgingS: number;
  /** CPU time of the harness's process, every thread (s). */
  cpuS: number;
  calls: number;
  boundS: number;
  scored: Record<string, number>;
  errors: number;
}

/**
 * The reference harness itself (scoring/batch.py from the mirror, unchanged) on the same 1,200 × 4 files, pointed at
 * the simulated judge with OPENAI_BASE_URL (the simulator serves the Responses API it calls), `--max-workers 12`:
 * the other side of the issue-29 side-by-side check. Skipped with the reason when Python, its packages or the mirror
 * are absent.
 */
async function referenceHarnessRow(log: (line: string) => void, queries?: number): Promise<ReferenceRun | string> {
  const answers = answersDir(true);
  const file = path.join(SHARED, 'datasets', 'lattice', 'filtered_queries_1200.json');
  if (!answers || !fs.existsSync(file))
    return "reference harness: skipped — needs the reference mirror (its scoring/ and June's answers) and ../shared/datasets/lattice";
  try {
    execFileSync(PYTHON, ['-c', 'import openai, dotenv'], { stdio: 'ignore' });
  } catch {
    return `reference harness: skipped — ${PYTHON} cannot import openai and dotenv (pip install openai==2.14.0 python-dotenv==1.2.1, the reference's requirements.txt; JUDGEFLOW_BENCH_PYTHON names another Python)`;
  }
  const dir = scratchDir('reference-');
  execFileSync('sh', ['-c', `git -C "${MIRROR}" archive HEAD scoring/ 2>/dev/null | tar -x -C "${dir}"`]);
  const all = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown[];
  const queriesFile = path.join(dir, 'queries.json');
  fs.writeFileSync(queriesFile, JSON.stringify(queries ? all.slice(0, queries) : all));
  const count = queries ?? all.length;
  const judge = await startSimServer({ latencyMs: 400 });
  log(
    `\nrunning the reference harness (scoring/batch.py): ${count} queries × ${answers.copilots} answer files, one call per query, 400 ms per judge call, 12 at a time …`,
  );
  try {
    const output = path.join(dir, 'scores.json');
    // The module run as `python -m scoring.batch` would run it, then the process's CPU time (every thread) written out.
    const cpuFile = path.join(dir, 'cpu.txt');
    const wrapper = `import resource, runpy, sys\nsys.argv = ['scoring.batch'] + sys.argv[1:]\ntry:\n    runpy.run_module('scoring.batch', run_name='__main__', alter_sys=True)\nfinally:\n    r = resource.getrusage(resource.RUSAGE_SELF)\n    open(${JSON.stringify(cpuFile)}, 'w').write(str(r.ru_utime + r.ru_stime))\n`;
    const args = [
      '-c',
      wrapper,
      '--queries',
      queriesFile,
      '--agents-dir',
      answers.dir,
      '--output',
      output,
      '--log-dir',
      path.join(dir, 'logs'),
      '--model',
      'sim-judge',
      '--max-workers',
      '12',
    ];
    const started = Date.now();
    const loop = watchEventLoop();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(PYTHON, args, {
        cwd: dir,
        env: { ...process.env, OPENAI_API_KEY: 'sk-sim-bench', OPENAI_BASE_URL: judge.url },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2_000)));
      child.once('error', reject);
      child.once('exit', (c) => (c === 0 ? resolve() : reject(new Error(`scoring/batch.py exited ${c}: ${stderr}`))));
    });
    const wallS = (Date.now() - started) / 1000;
    // The summaries judgeflow's report holds (leaderboard, per task, category and dimension) come from the next step.
    const built = Date.now();
    execFileSync(
      PYTHON,
      [path.join('scoring', 'build_benchmark.py'), '--input', output, '--output', path.join(dir, 'benchmark.json')],
      {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const buildS = (Date.now() - built) / 1000;
    log(simSpanLine('reference harness', simSpanFigures(judge.requests, 400), loop()));
    const scores = JSON.parse(fs.readFileSync(output, 'utf8')) as {
      summary: Record<string, { count: number; errors: number }>;
    };
    const times = judge.requests.map((r) => r.at);
    return {
      wallS,
      buildS,
      firstJudgeS: (Math.min(...times) - started) / 1000,
      judgingS: (Math.max(...times) + 400 - Math.min(...times)) / 1000,
      cpuS: Number(fs.readFileSync(cpuFile, 'utf8')),
      calls: judge.requests.length,
      boundS: Math.ceil(count / 12) * 0.4,
      scored: Object.fromEntries(Object.entries(scores.summary).map(([k, v]) => [k, v.count])),
      errors: Object.values(scores.summary).reduce((n, v) => n + v.errors, 0),
    };
  } finally {
    await judge.close();
  }
}

/**
 * judgeflow's joint run of 1,200 × 4 beside the reference harness's, on the same files and simulated judge. judgeflow's
 * run ends with its report (leaderboard, per-task, per-category and per-dimension summaries); the reference needs
 * build_benchmark.py after batch.py for those, so its end to end is both. judgeflow's worker is polling before the run
 * starts (a user's worker is long-lived); its start-up is the line below the table.
 */
export function sideBySideLines(judgeflow: LatticeFilesRow, reference: ReferenceRun): string[] {
  const f = judgeflow.figures;
  const both = reference.wallS + reference.buildS;
  const row = (
    name: string,
    calls: number | string,
    wall: number,
    judging: number,
    bound: number,
    cpu: string,
    first: number,
  ) =>
    `| ${name} | ${calls} | ${wall.toFixed(1)} | ${judging.toFixed(1)} | ${bound.toFixed(1)} | ${(wall / bound).toFixed(2)}× | ${(judging / bound).toFixed(3)}× | ${cpu} | ${first.toFixed(2)} |`;
  const judgeflowCpu = `${(f.workerCpuMs / 1000).toFixed(1)} (worker; the Temporal server's not counted)`;
  return [
    '| side by side (1200 × 4, 400 ms a call, 12 at a time) | judge calls | wall s | judging s | bound s | wall ÷ bound | judging ÷ bound | CPU s (harness process) | to the first judge call s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    row(
      'reference harness: scoring/batch.py (scores)',
      reference.calls,
      reference.wallS,
      reference.judgingS,
      reference.boundS,
      reference.cpuS.toFixed(1),
      reference.firstJudgeS,
    ),
    row(
      'reference harness: batch.py + build_benchmark.py (scores and summaries)',
      reference.calls,
      both,
      reference.judgingS,
      reference.boundS,
      `${reference.cpuS.toFixed(1)} (batch.py)`,
      reference.firstJudgeS,
    ),
    row(
      'judgeflow, joint: run start to result (scores and summaries, report written)',
      f.llmCalls,
      f.wallS,
      f.judgingS!,
      f.boundS,
      judgeflowCpu,
      f.firstJudgeS ?? NaN,
    ),
    ...(f.workflowS !== undefined
      ? [
          row(
            'judgeflow, joint: workflow start to close (server clock)',
            f.llmCalls,
            f.workflowS,
            f.judgingS!,
            f.boundS,
            judgeflowCpu,
            f.firstJudgeS ?? NaN,
          ),
        ]
      : []),
    '',
    `reference scored per agent: ${Object.entries(reference.scored)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; errors ${reference.errors}; build_benchmark.py ${reference.buildS.toFixed(2)} s.`,
    `judgeflow end to end ÷ reference end to end (batch.py + build_benchmark.py): ${(f.wallS / both).toFixed(2)}×; ÷ batch.py alone: ${(f.wallS / reference.wallS).toFixed(2)}×.`,
    ...(f.workerStart
      ? [
          `judgeflow's worker, before the run (not in its wall): spawned to its polling line ${f.workerStart.printedS.toFixed(2)} s, to the server listing it polling ${f.workerStart.pollingS.toFixed(2)} s; in the run, the start call answered at ${f.startCallS?.toFixed(2) ?? '–'} s, first workflow task at ${f.firstWorkflowTaskS?.toFixed(2) ?? '–'} s, first activity at ${f.firstActivityS?.toFixed(2) ?? '–'} s.`,
        ]
      : []),
  ];
}

export function latticeFilesTable(rows: LatticeFilesRow[]): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  const header = [
    'run',
    'judge calls',
    'wall s',
    'bound s',
    'wall ÷ bound',
    'judging s',
    'judging ÷ bound',
    'judge tokens (prompt + completion)',
    'judge cost at the stated price',
  ];
  return [
    line(header),
    line(header.map(() => '---')),
    ...rows.map((r) =>
      line([
        `${r.figures.scenario.name} (${r.figures.scenario.queries} × ${r.figures.scenario.copilots}, ${r.figures.scenario.judgeConcurrency} at a time)`,
        r.figures.llmCalls,
        r.figures.wallS.toFixed(1),
        r.figures.boundS.toFixed(1),
        `${(r.figures.wallS / r.figures.boundS).toFixed(2)}×`,
        r.figures.judgingS!.toFixed(1),
        `${(r.figures.judgingS! / r.figures.boundS).toFixed(3)}×`,
        `${(r.tokens.prompt + r.tokens.completion).toLocaleString('en')} (${r.tokens.prompt.toLocaleString('en')} + ${r.tokens.completion.toLocaleString('en')})`,
        r.costUsd === null ? '–' : `$${r.costUsd.toFixed(2)}`,
      ]),
    ),
  ].join('\n');
}

/** The three runs and the comparison, printed; a run whose data is absent is skipped with its reason. */
export async function benchLatticeFiles(log: (line: string) => void, queries?: number): Promise<number> {
  try {
    return await latticeFilesRows(log, queries);
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
    scratch = undefined;
  }
}

async function latticeFilesRows(log: (line: string) => void, queries?: number): Promise<number> {
  // "side-by-side": only the issue-29 pair (docs/bench.md); "judgeflow-side": judgeflow's side of it alone (for profiling).
  const only = process.env.JUDGEFLOW_BENCH_LATTICE_ROWS;
  const pairOnly = only === 'side-by-side' || only === 'judgeflow-side';
  const results = [
    pairOnly
      ? 'reference files, independent: not asked (JUDGEFLOW_BENCH_LATTICE_ROWS)'
      : await runRow('reference files, independent', 'independent', false, 12, log, queries),
    pairOnly
      ? 'reference files, joint: not asked (JUDGEFLOW_BENCH_LATTICE_ROWS)'
      : await runRow('reference files, joint', 'joint', false, 12, log, queries),
    await runRow('side by side: 4 copilots, joint', 'joint', true, 12, log, queries),
  ];
  const reference =
    only === 'judgeflow-side'
      ? 'reference harness: not asked (JUDGEFLOW_BENCH_LATTICE_ROWS=judgeflow-side)'
      : await referenceHarnessRow(log, queries);
  if (typeof reference === 'string') log(reference);
  const rows = results.filter((r): r is LatticeFilesRow => typeof r !== 'string');
  for (const r of results) if (typeof r === 'string') log(r);
  if (!rows.length) return 0;
  log('\n' + latticeFilesTable(rows));
  if (typeof results[0] !== 'string' && typeof results[1] !== 'string')
    log(
      '\nindependent vs joint on the same answers (simulated judge):\n' +
        modeComparison(results[0], results[1]).join('\n'),
    );
  if (typeof results[2] !== 'string' && typeof reference !== 'string')
    log(
      `\nthe issue-29 side-by-side check (load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(', ')}):\n` + sideBySideLines(results[2], reference).join('\n'),
    );
  return 0;
}
