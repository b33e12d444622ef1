import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startSimServer, type SimServer } from '../../sim/server';
import { SqliteStore } from '../../stores/sqlite';
import { CLI, runCli } from '../support/cli';
import { latticeGrid, tempDir, uniqueQueue, until, writeQueries } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';

jest.setTimeout(300_000);

const JUDGE_CONCURRENCY = 3;
const COPILOT_CONCURRENCY = 4;
const QUERIES = 30;
const COPILOTS = { A: 'sim-thorough', B: 'sim-terse' };
const EXPECTED = QUERIES * Object.keys(COPILOTS).length; // 60 answers, 60 judgments

let judge: SimServer;
let copilots: SimServer;
let dir: string;
let env: NodeJS.ProcessEnv;
let configFile: string;
let store: SqliteStore;

beforeAll(async () => {
  judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 150 });
  copilots = await startSimServer({ latencyMs: 20 });
  dir = tempDir('jf-run-again-');
  const queries = writeQueries(dir, latticeGrid(6, 5));
  configFile = path.join(dir, 'config.json');
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      protocol: 'lattice',
      queries,
      output: 'runs',
      judge: { baseURL: judge.url, model: 'judge', concurrency: JUDGE_CONCURRENCY },
      pricing: { judge: { inputPerMTok: 1, outputPerMTok: 2 } },
      copilots: Object.entries(COPILOTS).map(([name, model]) => ({
        name,
        type: 'openai',
        baseURL: copilots.url,
        model,
        concurrency: COPILOT_CONCURRENCY,
      })),
    }),
  );
  env = {
    JUDGEFLOW_HOME: path.join(dir, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('run-again'),
    JUDGEFLOW_PROGRESS: '',
  };
});

afterAll(async () => {
  await store?.close();
  await judge?.close();
  await copilots?.close();
});

const storeOf = () => (store ??= new SqliteStore(path.join(dir, 'home', 'results.db')));
const judgeCalls = () => judge.requests.length;
const copilotCalls = () => copilots.requests.length;

test('the attached `run` SIGKILLed halfway, then the same command again: one run, completed, every answer and judgment stored once, only the calls in flight repeated', async () => {
  const first = spawn(process.execPath, [CLI, 'run', '--config', configFile], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => first.once('exit', resolve));
  await until(async () => {
    if (!fs.existsSync(path.join(dir, 'home', 'results.db'))) return false;
    const runs = await storeOf().listRuns();
    return runs.length === 1 && (await storeOf().judgments(runs[0].runId)).length >= EXPECTED / 2;
  }, 150_000);
  first.kill('SIGKILL');
  await exited;
  const [killed] = await storeOf().listRuns();
  const judgedAtKill = (await storeOf().judgments(killed.runId)).length;
  const answeredAtKill = (await storeOf().responses(killed.runId)).length;
  const [judgeAtKill, copilotAtKill] = [judgeCalls(), copilotCalls()];
  expect(judgedAtKill).toBeLessThan(EXPECTED);

  const again = await runCli(['run', '--config', configFile, '--json'], env);
  expect({ code: again.code, stderr: again.code ? again.stderr : '' }).toEqual({ code: 0, stderr: '' });
  expect(again.stderr + again.stdout).toContain(
    `Run ${killed.runId} with this config, snapshot and rubric is already open`,
  );
  expect(JSON.parse(again.stdout.trim().split('\n').pop()!).runId).toBe(killed.runId);

  const runs = await storeOf().listRuns();
  expect(runs.map((r) => [r.runId, r.status])).toEqual([[killed.runId, 'completed']]);
  const judgments = await storeOf().judgments(killed.runId);
  expect(judgments).toHaveLength(EXPECTED);
  expect(new Set(judgments.map((j) => `${j.queryId}/${j.copilot}`)).size).toBe(EXPECTED);
  expect(judgments.every((j) => j.status === 'ok')).toBe(true);
  expect(await storeOf().responses(killed.runId)).toHaveLength(EXPECTED);
  // Calls after the kill: what was still missing, plus at most the calls in flight at the kill.
  expect(judgeCalls() - judgeAtKill).toBeLessThanOrEqual(EXPECTED - judgedAtKill + JUDGE_CONCURRENCY);
  expect(copilotCalls() - copilotAtKill).toBeLessThanOrEqual(EXPECTED - answeredAtKill + COPILOT_CONCURRENCY * 2);
  expect(judgeCalls()).toBeLessThanOrEqual(EXPECTED + JUDGE_CONCURRENCY);
});

test('the same command after the run completed reports the finished run and makes no call', async () => {
  const [judgeBefore, copilotBefore] = [judgeCalls(), copilotCalls()];
  const [done] = await storeOf().listRuns();
  const again = await runCli(['run', '--config', configFile], env);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain(
    `Run ${done.runId} with this config, snapshot and rubric completed at ${done.finishedAt}; its report is ${done.reportPath}`,
  );
  expect([judgeCalls(), copilotCalls()]).toEqual([judgeBefore, copilotBefore]);
  expect(await storeOf().listRuns()).toHaveLength(1);
});

test('--new asks everything again; --new --reuse-judgments answers byte-identical judge requests from the store', async () => {
  const [judgeBefore, copilotBefore] = [judgeCalls(), copilotCalls()];
  const fresh = await runCli(['run', '--config', configFile, '--new', '--json'], env);
  expect({ code: fresh.code, stderr: fresh.code ? fresh.stderr : '' }).toEqual({ code: 0, stderr: '' });
  expect(judgeCalls() - judgeBefore).toBe(EXPECTED);
  expect(copilotCalls() - copilotBefore).toBe(EXPECTED);
  expect((await storeOf().listRuns()).filter((r) => r.status === 'completed')).toHaveLength(2);

  const [judgeMid, copilotMid] = [judgeCalls(), copilotCalls()];
  const reused = await runCli(['run', '--config', configFile, '--new', '--reuse-judgments', '--json'], env);
  expect({ code: reused.code, stderr: reused.code ? reused.stderr : '' }).toEqual({ code: 0, stderr: '' });
  expect(copilotCalls() - copilotMid).toBe(EXPECTED); // a fresh sample of every copilot…
  expect(judgeCalls() - judgeMid).toBe(0); // …whose (deterministic) answers make judge requests the store has answered
  const { runId, reportPath } = JSON.parse(reused.stdout.trim().split('\n').pop()!);
  expect((await storeOf().judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(EXPECTED);
  // The cost table counts them: no call made by the judge, every request answered from the store, and what it avoided.
  const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
  expect(report.cost.judge.judge).toMatchObject({
    calls: 0,
    promptTokens: 0,
    estimatedCostUsd: 0,
    reusedCalls: EXPECTED,
  });
  expect(report.cost.judge.judge.avoidedCostUsd).toBeGreaterThan(0);
  expect(report.cost.total).toMatchObject({ calls: EXPECTED, reusedCalls: EXPECTED }); // the copilots' calls only
  const markdown = fs.readFileSync(reportPath.replace(/\.json$/, '.md'), 'utf8');
  expect(markdown).toContain('answered from the store (avoided cost)');
  expect(markdown).toMatch(
    new RegExp(`\\| judge judge \\| judge \\| 0 \\|.*\\| ${EXPECTED} \\(\\$\\d+\\.\\d{4}\\) \\|`),
  );
  expect(fs.readFileSync(reportPath.replace(/\.json$/, '.html'), 'utf8')).toContain(
    'answered from the store (avoided cost)',
  );
});

test('--reuse-judgments without --new is refused with the reason', async () => {
  const refused = await runCli(['run', '--config', configFile, '--reuse-judgments'], env);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('--reuse-judgments goes with --new');
});

test('a `run` process that picked up a killed run on its queue keeps working until that run ends, and says so', async () => {
  const home = path.join(tempDir('jf-orphan-'), 'home');
  const queue = uniqueQueue('orphan');
  const own = { JUDGEFLOW_HOME: home, JUDGEFLOW_TASK_QUEUE: queue, JUDGEFLOW_PROGRESS: '' };
  const other = path.join(dir, 'other.json');
  const small = writeQueries(dir, latticeGrid(1, 2), 'small.jsonl');
  fs.writeFileSync(other, JSON.stringify({ ...JSON.parse(fs.readFileSync(configFile, 'utf8')), queries: small }));
  const first = spawn(process.execPath, [CLI, 'run', '--config', configFile, '--new'], {
    env: { ...process.env, ...own },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => first.once('exit', resolve));
  const db = path.join(home, 'results.db');
  const orphanStore = () => new SqliteStore(db);
  const judgedOf = async () => {
    if (!fs.existsSync(db)) return { runId: '', judged: 0 };
    const s = orphanStore();
    try {
      const [run] = await s.listRuns();
      return { runId: run?.runId ?? '', judged: run ? (await s.judgments(run.runId)).length : 0 };
    } finally {
      await s.close();
    }
  };
  await until(async () => (await judgedOf()).judged >= 10, 150_000);
  first.kill('SIGKILL');
  await exited;
  const { runId: orphan } = await judgedOf();

  const second = await runCli(['run', '--config', other], own);
  expect({ code: second.code, stderr: second.code ? second.stderr : '' }).toEqual({ code: 0, stderr: '' });
  expect(second.stdout).toContain(
    `${orphan} is still open on task queue ${queue} with no process of its own: this process keeps working until it ends`,
  );
  const s = orphanStore();
  try {
    expect((await s.getRun(orphan))?.status).toBe('completed');
    expect(await s.judgments(orphan)).toHaveLength(EXPECTED);
  } finally {
    await s.close();
  }
});
