import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { latticeGrid, REPO, simCopilots, tempDir, uniqueQueue, until, writeQueries } from '../support/harness';
import { cliInProcess } from '../support/cliInProcess';
import { simServersForFile } from '../support/sims';
import type { SimServer } from '../../sim/server';
import { progressMode, runNotes } from '../../client/progress';
import { InputError } from '../../core/model/inputError';

jest.setTimeout(120_000);

// Slow enough (10 answers per copilot, 2 at a time, 300 ms each) that the progress poll (every 500 ms) draws a frame mid-stage.
const sim = simServersForFile({ judge: {}, copilots: { latencyMs: 300 } });
const CLI = path.join(REPO, 'bin', 'judgeflow.js');
const ESC = '\u001b[';

function setup(name: string, extra: Record<string, unknown> = {}) {
  const dir = tempDir(`jf-${name}-`);
  const queries = writeQueries(
    dir,
    latticeGrid(16, 5).filter((q) => ['T2', 'T16'].includes(q.task as string)),
  );
  const configFile = path.join(dir, 'bench.yaml');
  fs.writeFileSync(
    configFile,
    YAML.stringify({
      protocol: 'lattice',
      queries,
      judge: { baseURL: sim.judge.url, model: 'sim-judge' },
      copilots: simCopilots(sim.copilots.url, { Sorin: 'sim-thorough', Terse: 'sim-terse' }).map((c) => ({
        ...c,
        concurrency: 2,
      })),
      output: path.join(dir, 'runs'),
      pricing: { 'sim-judge': { inputPerMTok: 1, outputPerMTok: 2 } },
      ...extra,
    }),
  );
  const env = {
    JUDGEFLOW_HOME: path.join(dir, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue(name),
    JUDGEFLOW_PROGRESS: '',
  };
  return { configFile, env };
}

/** Requests per model the sims received since `marks`. */
function requestsSince(marks: Record<string, number>, servers: Record<string, SimServer>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, server] of Object.entries(servers))
    for (const r of server.requests.slice(marks[name])) out[r.model] = (out[r.model] ?? 0) + 1;
  return out;
}

/** `judgeflow ARGS` inside a pseudo-terminal (util-linux `script`), as a person at a terminal runs it. */
function runInPty(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    execFile(
      'script',
      ['-q', '-e', '-c', command, '/dev/null'],
      { env: { ...process.env, ...env, COLUMNS: '120', TERM: 'xterm' }, timeout: 110_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout }),
    );
  });
}

test('run --dry-run plans exactly the calls the run then makes; on a terminal the run draws progress bars', async () => {
  const { configFile, env } = setup('pty');
  const dry = await cliInProcess(['run', '--config', configFile, '--dry-run', '--json'], env);
  expect(dry.code).toBe(0);
  const plan = JSON.parse(dry.stdout.trim().split('\n').pop()!);
  expect(plan).toMatchObject({ dryRun: true, totalCalls: 10 * 2 + 10 * 2 });
  expect(plan.endpoints.find((e: any) => e.role === 'judge').estimatedCostUsd).toBeGreaterThan(0);
  expect(fs.existsSync(path.join(env.JUDGEFLOW_HOME, 'results.db'))).toBe(false); // nothing started, nothing stored

  const marks = { judge: sim.judge.requests.length, copilots: sim.copilots.requests.length };
  const { code, output } = await runInPty(['run', '--config', configFile], env);
  expect(code).toBe(0);
  // Counted at the servers: exactly what the dry run planned, per endpoint.
  const made = requestsSince(marks, sim);
  for (const e of plan.endpoints) expect(made[e.model]).toBe(e.calls);
  // Bars drawn in place: cursor control, bar characters, one bar per stage with done/total, failures, rate and ETA.
  expect(output).toContain(ESC);
  expect(output).toMatch(/collect\s+\|[█░]+\| 20\/20 \| 0 failed \| [\d.]+\/s \|/);
  expect(output).toMatch(/\| ETA \d+s/); // while a stage runs (its last frame, once done, may be drawn without one)
  expect(output).toMatch(/judge\s+\|[█░]+\| 20\/20 \| 0 failed/);
  expect(output).toContain('Report:');
});

test('with --json or piped output, progress is plain lines', async () => {
  const { configFile, env } = setup('plain');
  // In process: stdout is not a terminal here, as when piped (and the spawned CLI's start-up is saved).
  const piped = await cliInProcess(['run', '--config', configFile, '--json'], env);
  expect(piped.code).toBe(0);
  expect(piped.stderr).toMatch(/^\[collect\] \d+\/20 done$/m);
  expect(piped.stderr).toMatch(/^\[judge\] \d+\/20 done$/m);
  expect(piped.stderr + piped.stdout).not.toContain(ESC);
  expect(piped.stderr).not.toContain('█');
  const last = JSON.parse(piped.stdout.trim().split('\n').pop()!);
  expect(fs.existsSync(path.join(path.dirname(last.reportPath), 'report.html'))).toBe(true);
});

test('progress mode: bars only on a terminal and never with --json, unless forced; a bad value is an input error', () => {
  expect(progressMode(undefined, false, { isTTY: true }, {})).toBe('bars');
  expect(progressMode(undefined, true, { isTTY: true }, {})).toBe('lines');
  expect(progressMode(undefined, false, { isTTY: false }, {})).toBe('lines');
  expect(progressMode('bars', true, { isTTY: false }, {})).toBe('bars');
  expect(progressMode(undefined, false, { isTTY: true }, { JUDGEFLOW_PROGRESS: 'lines' })).toBe('lines');
  expect(() => progressMode('fancy', false, {}, {})).toThrow(InputError);
});

test('an attached run that reaches its budget prints one line: paused, why, and how to go on; no raw workflow log, no warning past the cap', async () => {
  const budget = 0.01;
  const pricing = {
    'sim-judge': { inputPerMTok: 1, outputPerMTok: 2 },
    'sim-thorough': { inputPerMTok: 1, outputPerMTok: 4 },
    'sim-terse': { inputPerMTok: 1, outputPerMTok: 4 },
  };
  const { configFile, env } = setup('budget-pause', { budget: { usd: budget }, pricing });
  const child = spawn(process.execPath, [CLI, 'run', '--config', configFile], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  // 'close', not 'exit': the run's process (bin/judgeflow.js relaunches it) holds the pipes until it has exited too.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  try {
    await until(() => /^Paused \S+ at its budget/m.test(output), 100_000);
    const runId = /^Paused (\S+) at its budget/m.exec(output)![1];
    expect(output).toMatch(
      new RegExp(
        `^Paused ${runId} at its budget \\(\\$\\d+\\.\\d{4} spent of the \\$${budget} budget\\)\\. Calls in flight finish and are kept; nothing new starts\\. Raise the budget with judgeflow resume ${runId} --budget-usd N, or stop with judgeflow cancel ${runId}\\.$`,
        'm',
      ),
    );
    const spent = Number(/\(\$(\d+\.\d{4}) spent of the/.exec(output)![1]);
    expect(spent).toBeGreaterThanOrEqual(budget);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // more progress polls: the pause is told once
    expect(output.match(/^Paused /gm)).toHaveLength(1);
    // The workflow's own log line (a metadata object) is not the terminal's; a warning line, if any, is below the cap.
    expect(output).not.toMatch(/sdkComponent|\[WARN\]/);
    for (const m of output.matchAll(/^Warning: 80% of the budget reached: \$([\d.]+) of the \$([\d.]+) budget/gm))
      expect(Number(m[1])).toBeLessThan(Number(m[2]));
    // Stopped (the run may also have finished on its own: items already in flight when it paused can be the last ones).
    expect((await cliInProcess(['cancel', runId], env)).code).toBe(0);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 30_000)))]);
    clearTimeout(timer);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
});

test('run notes: a pause is told once with how to go on, a resume once, each warning once, and none that is past its cap', () => {
  const notes = runNotes();
  const base = { runId: 'r1', stage: 'judge', done: 3, total: 10, failures: 0 };
  expect(notes({ ...base, warnings: ['80% of the budget reached: $0.0420 of the $0.05 budget spent'] })).toEqual([
    'Warning: 80% of the budget reached: $0.0420 of the $0.05 budget spent',
  ]);
  const paused = {
    reason: 'budget',
    by: 'budget' as const,
    at: '2026-12-01T10:00:00.000Z',
    spentUsd: 0.0542,
    budgetUsd: 0.05,
  };
  const both = [
    '80% of the budget reached: $0.0420 of the $0.05 budget spent',
    '80% of the budget reached: $0.0542 of the $0.1 budget spent',
    '80% of the budget reached: $0.0542 of the $0.05 budget spent',
  ];
  expect(notes({ ...base, warnings: both, paused })).toEqual([
    'Warning: 80% of the budget reached: $0.0542 of the $0.1 budget spent',
    'Paused r1 at its budget ($0.0542 spent of the $0.05 budget). Calls in flight finish and are kept; nothing new starts. Raise the budget with judgeflow resume r1 --budget-usd N, or stop with judgeflow cancel r1.',
  ]);
  expect(notes({ ...base, warnings: both, paused })).toEqual([]);
  expect(notes({ ...base, warnings: both, paused: null })).toEqual(['Resumed r1: the run goes on where it paused.']);
  expect(
    notes({ ...base, paused: { reason: 'paused by judgeflow pause', by: 'user', at: '2026-12-01T10:05:00.000Z' } }),
  ).toEqual(['Paused r1 by judgeflow pause. Calls in flight finish and are kept. Go on with judgeflow resume r1.']);
  expect(
    notes({
      ...base,
      paused: { reason: '5 of the last 10 items failed at copilot A', by: 'breaker', at: '2026-12-01T10:09:00.000Z' },
    }),
  ).toEqual([
    'Paused r1: 5 of the last 10 items failed at copilot A. Fix the endpoint, then judgeflow resume r1 (with --config FILE for new endpoint settings).',
  ]);
  expect(
    notes({
      ...base,
      paused: { reason: 'budget', by: 'budget', at: '2026-12-01T10:10:00.000Z', spentTokens: 1200, budgetTokens: 1000 },
    })[0],
  ).toContain(
    '(1200 tokens used of the 1000-token budget). Calls in flight finish and are kept; nothing new starts. Raise the budget with judgeflow resume r1 --budget-tokens N',
  );
});
