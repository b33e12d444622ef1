/**
 * `judgeflow bench`'s run scenarios: one LATTICE run each against simulated copilots and judge (latency and rate limits
 * as a provider would impose them), on its own throwaway Temporal dev server, with the worker in its own process so
 * its CPU time and peak memory are its own. Figures, not assertions.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { judgeflowHome } from '../core/io/home';
import { spawnWorkerProcess } from '../worker/workerProcess';
import { startSimServer, type SimServer } from '../sim/server';
import {
  requestLogEntry,
  simSpanFigures,
  watchEventLoop,
  type EventLoopDelayFigures,
  type SimSpanFigures,
} from './benchSim';
import { deploymentVersion, workflowBuild } from '../worker/versioning';
import { startWorkflow } from './runWorkflow';
import { benchmarkRun } from '../workflows';
import { toCsv } from '../core/io/csv';
import { parseRunConfig, type RunConfig } from './config';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { runPriority } from './runPriority';
import { provisionPostgres, startPostgres, type PostgresServer } from './postgresServer';
import { connectClient } from './connection';
import { newRunId, runInput } from './startRun';
import { findOrInstallTemporalCli } from './temporalCli';
import { freePort, startDevServer } from './temporalServer';
import { runsCompiled } from './startupFigures';

export interface RunScenario {
  name: string;
  queries: number;
  copilots: number;
  /** Added to every simulated call. */
  latencyMs: number;
  copilotConcurrency: number;
  judgeConcurrency: number;
  /** Each copilot endpoint's rate limit (requests per second, over a sliding second); none when absent. */
  copilotPerSecond?: number;
  judgePerSecond?: number;
  /** The results store: SQLite (default) or a throwaway local PostgreSQL server. */
  store?: 'sqlite' | 'postgres';
  /** Worker processes serving the run (default 1); with PostgreSQL they share the store as workers on several machines would. */
  workers?: number;
  /**
   * 'cab-judging': a CryptoAnalystBench judging phase alone, as a re-judge has it: every copilot's answers are held
   * already (one CSV file), so the run imports them in one step and judges one shared conversation per query.
   */
  kind?: 'lattice' | 'cab-judging' | 'lattice-files';
  /**
   * 'lattice-files': the LATTICE reference's published files as they are (its query file and one
   * filtered_response_<agent>.json per copilot, read by copilotsFrom), judged `judging`; nothing is asked of a copilot.
   */
  latticeFiles?: { queries: string; answersDir: string; judging: 'independent' | 'joint' };
  /**
   * Many runs, one cluster: a small run of `queries` × the same copilots, timed on the same workers alone (before this
   * run starts) and again while this run is in flight (once at this run's priority, so only fairness separates them,
   * and once at priority 1).
   */
  alongside?: { queries: number };
  /** This run's priority (client/runPriority.ts); default 3. */
  priority?: number;
}

/** Each history of the run (its continue-as-new chain and child workflows) as the server holds it. */
export interface HistorySize {
  events: number;
  bytes: number;
}

/** The small run's wall time alone and with this run in flight (RunScenario.alongside). */
export interface AlongsideFigures {
  queries: number;
  aloneS: number;
  samePriorityS: number;
  firstPriorityS: number;
}

export interface RunFigures {
  scenario: RunScenario;
  wallS: number;
  /** The least wall time the latencies, concurrencies and rate limits allow with collecting and judging overlapped. */
  boundS: number;
  llmCalls: number;
  refused: number;
  /** Summed over the workers. */
  workerCpuMs: number;
  /** The largest worker's peak. */
  workerPeakMB: number;
  serverPeakMB: number;
  histories: number;
  largestHistory: number;
  /** The largest history's size in bytes (Temporal warns at 10 MB, stops at 50 MB) and every history's. */
  largestHistoryBytes: number;
  historySizes: HistorySize[];
  storeMB: number;
  /** The report step (writeReport, from its history events) and the largest worker's resident memory while it ran. */
  reportS?: number;
  reportPeakMB?: number;
  alongside?: AlongsideFigures;
  /** PostgreSQL: rows written and transactions committed (reads' too) per second of the run (every worker and small run beside it). */
  postgresWrites?: { rowsPerS: number; commitsPerS: number };
  /** The first judge call was sent before the last copilot call. */
  overlapped: boolean;
  /**
   * cab-judging: the judging phase alone (first judge request to the last judge answer; `wallS` is the whole run with
   * its import and report), and the mean idle time of a judge slot between two turns of one conversation and between
   * two conversations.
   */
  judgingS?: number;
  gaps?: JudgeGaps;
  /** The run's report.json, for figures drawn from it (lattice-files: scores, cost, per-answer totals in results.csv). */
  reportPath?: string;
  /** From the run's start: the first judge request, and the last judge answer (s). */
  firstJudgeS?: number;
  lastJudgeS?: number;
  /** The workers' CPU time while judging (first judge request to last answer, sampled every half second), per judge call. */
  judgingCpuMsPerCall?: number;
  /** Per activity type over every history of the run: how many, and the span from the first scheduled to the last completed (s from the run's start). */
  activities?: Record<string, ActivitySpan>;
  /**
   * The first worker's start-up, before the run starts (not in `wallS`): its process spawned to its line saying it
   * polls, and to the server listing it as a poller of the task queue's workflow and activity tasks (s).
   */
  workerStart?: { printedS: number; pollingS: number };
  /** The run's workflow from its WorkflowExecutionStarted event to the close of its last history (server clock, s). */
  workflowS?: number;
  /** From the run's start: the first workflow task the worker picked up, and the first activity it started (s). */
  firstWorkflowTaskS?: number;
  /** How long the client's workflow start call took (s). */
  startCallS?: number;
  firstActivityS?: number;
  /** The judge simulator's own view of its calls (client/benchSim.ts), and the bench process's event-loop delay. */
  sim?: SimSpanFigures;
  loopDelay?: EventLoopDelayFigures;
}

export interface ActivitySpan {
  count: number;
  fromS: number;
  toS: number;
}

export interface JudgeGaps {
  betweenTurnsMs: number;
  betweenUnitsMs: number;
}

const REPO = path.resolve(__dirname, '..');

/**
 * The bound: each endpoint needs max(calls ÷ rate, ⌈calls ÷ concurrency⌉ × latency); judging cannot end before the last
 * answer plus one judge call, nor start before the first answer.
 */
export function pipelinedBoundS(s: RunScenario): number {
  const latency = s.latencyMs / 1000;
  const stage = (calls: number, concurrency: number, perSecond?: number) =>
    Math.max(perSecond ? calls / perSecond : 0, Math.ceil(calls / concurrency) * latency);
  const collect = stage(s.queries, s.copilotConcurrency, s.copilotPerSecond);
  const judge = stage(s.queries * s.copilots, s.judgeConcurrency, s.judgePerSecond);
  return Math.max(collect + latency, latency + judge);
}

/**
 * The CryptoAnalystBench judging bound: one conversation per query, a scoring turn per answer and a ranking turn, each
 * a judge call in turn; `judgeConcurrency` conversations at a time.
 */
export function cabJudgingBoundS(s: RunScenario): number {
  return Math.ceil(s.queries / s.judgeConcurrency) * (s.copilots + 1) * (s.latencyMs / 1000);
}

/** Judging held answers only: ⌈judge calls ÷ concurrency⌉ × latency (joint LATTICE: one call per query; else one per answer). */
export function heldAnswersBoundS(s: RunScenario): number {
  const calls = s.latticeFiles?.judging === 'joint' ? s.queries : s.queries * s.copilots;
  return Math.ceil(calls / s.judgeConcurrency) * (s.latencyMs / 1000);
}

export async function measureRun(s: RunScenario, log: (line: string) => void): Promise<RunFigures> {
  const files = s.kind === 'lattice-files' ? s.latticeFiles : undefined;
  const cab = s.kind === 'cab-judging' || files !== undefined; // answers held already: no copilot endpoints
  const dir = path.join(judgeflowHome(), 'bench', `${s.name}-${Date.now()}`);
  fs.mkdirSync(dir, { recursive: true });
  // A source edited since the last build sends the worker through tsx, without its report thread: other figures.
  if (!runsCompiled())
    log(
      `${s.name}: NOTE the worker runs from the sources through tsx (dist/ is missing or older than them), without its report thread and rehearsals; these are not the compiled build's figures (npm run build, or npm run bench, first)`,
    );
  const cli = await findOrInstallTemporalCli({ log });
  const server = await startDevServer({
    cli,
    port: await freePort(),
    headless: true,
    logFile: path.join(dir, 'temporal.log'),
  });
  const limit = (perSecond?: number) =>
    perSecond ? { rateLimit: { requestsPerMinute: perSecond, windowMs: 1_000 } } : {};
  const judge = await startSimServer({ latencyMs: s.latencyMs, ...limit(s.judgePerSecond) });
  const copilots = cab
    ? []
    : await Promise.all(
        Array.from({ length: s.copilots }, () =>
          startSimServer({ latencyMs: s.latencyMs, ...limit(s.copilotPerSecond) }),
        ),
      );
  let postgres: PostgresServer | undefined;
  if (s.store === 'postgres') {
    await provisionPostgres(log);
    postgres = await startPostgres(log);
  }
  const storeUrl = postgres ? await postgres.createDatabase('judgeflow_bench') : '';
  // One worker serves every call in flight (6 × 4 copilot calls + 16 judge calls at paper scale), above the default 32.
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    JUDGEFLOW_HOME: dir,
    JUDGEFLOW_STORE: storeUrl,
    JUDGEFLOW_TASK_QUEUE: 'judgeflow-bench',
    JUDGEFLOW_MAX_ACTIVITIES: '64',
  };
  const workers: ChildProcess[] = [];
  try {
    const config = parseRunConfig(
      {
        ...(files
          ? latticeFilesParts(files)
          : cab
            ? cabJudgingParts(dir, s)
            : { protocol: 'lattice', queries: writeQueries(dir, s.queries) }),
        judge: { baseURL: judge.url, model: 'sim-judge', concurrency: s.judgeConcurrency },
        ...(cab
          ? {}
          : {
              copilots: copilots.map((sim, i) => ({
                name: `C${i + 1}`,
                type: 'openai',
                baseURL: sim.url,
                model: i % 2 ? 'sim-terse' : 'sim-thorough',
                concurrency: s.copilotConcurrency,
              })),
            }),
        output: 'runs',
        simulated: true,
      },
      'bench config',
      dir,
    );
    // Each worker in its own directory and home, as on its own machine; only the store (and Temporal) is shared.
    const spawnedAt = Date.now();
    let printedAt = 0;
    for (let w = 0; w < (s.workers ?? 1); w++) {
      const home = w === 0 ? dir : path.join(dir, `machine-${w + 1}`);
      fs.mkdirSync(home, { recursive: true });
      if (w === 1) printedAt = Date.now();
      // Once more if it could not reach the server: on a loaded machine (the bench's own server starting) a connect can time out.
      workers.push(
        await startWorker({ ...env, JUDGEFLOW_HOME: home }, home, log).catch(() =>
          startWorker({ ...env, JUDGEFLOW_HOME: home }, home, log),
        ),
      );
    }
    printedAt ||= Date.now();
    const client = await connectClient(env);
    // Pinned to the workers' build, as an attached run is: the start does not wait for a worker to make its build current.
    const pinnedTo = deploymentVersion(env.JUDGEFLOW_TASK_QUEUE, (await workflowBuild(env)).buildId);
    // A user's worker is long-lived: the run starts once the server lists the worker polling and knows its build, as it
    // would for theirs (a start pinned to a build the server has not registered yet is refused and retried).
    await untilPolling(client, env.JUDGEFLOW_TASK_QUEUE, pinnedTo);
    const workerStart = { printedS: (printedAt - spawnedAt) / 1000, pollingS: (Date.now() - spawnedAt) / 1000 };
    const start = (runConfig: typeof config, priority?: number) => {
      const runId = newRunId('bench');
      return startWorkflow(client, benchmarkRun, {
        taskQueue: env.JUDGEFLOW_TASK_QUEUE,
        workflowId: runId,
        args: [runInput(runConfig, runId)],
        versioningOverride: { pinnedTo },
        priority: runPriority(runId, priority),
      });
    };
    const small = s.alongside ? smallRunConfig(config, dir, s.alongside.queries) : undefined;
    const timed = async (priority: number) => {
      const at = Date.now();
      await (await start(small!, priority)).result();
      return (Date.now() - at) / 1000;
    };
    const aloneS = small ? await timed(1) : 0;
    const smallCalls = [judge, ...copilots].reduce((sum, sim) => sum + sim.requests.length, 0);
    for (const sim of [judge, ...copilots]) sim.requests.length = 0; // the small run's calls are not this run's
    const rss = sampleRss(workers);
    const writesAtStart = postgres ? await databaseWrites(storeUrl) : undefined;
    const cpuAtStart = workers.map((w) => cpuMs(w.pid!)); // bundling the workflow code is start-up, not run work
    const started = Date.now();
    const loop = watchEventLoop();
    const handle = await start(config, s.priority);
    const startCallS = (Date.now() - started) / 1000;
    const runId = handle.workflowId;
    let alongside: AlongsideFigures | undefined;
    if (small) {
      // In flight: a fifth of its judge calls made, well before its end.
      while (judge.requests.length < (s.queries * s.copilots) / 5) await new Promise((r) => setTimeout(r, 200));
      alongside = {
        queries: s.alongside!.queries,
        aloneS,
        samePriorityS: await timed(s.priority ?? 3),
        firstPriorityS: await timed(1),
      };
    }
    const { reportPath } = await handle.result();
    const wallS = (Date.now() - started) / 1000;
    rss.stop();
    const workerCpuMs = workers.reduce((sum, w, i) => sum + cpuMs(w.pid!) - cpuAtStart[i], 0);
    const workerPeakMB = Math.max(...workers.map((w) => peakMB(w.pid!)));
    const serverPeakMB = peakMB(server.pid);
    // The statistics collector reports with a delay of up to a second (PostgreSQL's stats_fetch_consistency aside).
    const writes = writesAtStart && (await new Promise((r) => setTimeout(r, 1_500)), await databaseWrites(storeUrl));
    const sizes: HistorySize[] = [];
    let report: { from: number; to: number } | undefined;
    const activities: Record<string, ActivitySpan> = {};
    const timeline = { firstTask: Infinity, firstActivity: Infinity, from: Infinity, to: -Infinity };
    for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH "${runId}"` })) {
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      sizes.push({ events: history.events?.length ?? 0, bytes: historyBytes(history) });
      report ??= reportWindow(history);
      activitySpans(history, started, activities);
      historyTimeline(history, timeline);
      // Kept beside the run's store, to read where its time went event by event (temporal workflow show --input).
      fs.writeFileSync(path.join(dir, `history-${wf.workflowId}.json`), JSON.stringify(history));
    }
    await client.connection.close();
    const calls = [judge, ...copilots].flatMap((sim) => sim.requests);
    const lastCopilotCall = Math.max(-Infinity, ...copilots.flatMap((sim) => sim.requests.map((r) => r.at)));
    return {
      scenario: s,
      wallS,
      boundS: files ? heldAnswersBoundS(s) : cab ? cabJudgingBoundS(s) : pipelinedBoundS(s),
      reportPath,
      llmCalls: calls.length - (alongside ? 2 * smallCalls : 0), // the two small runs in flight beside it are not its calls
      refused: calls.filter((r) => r.rateLimited).length,
      workerCpuMs,
      workerPeakMB,
      serverPeakMB,
      histories: sizes.length,
      largestHistory: Math.max(...sizes.map((h) => h.events)),
      largestHistoryBytes: Math.max(...sizes.map((h) => h.bytes)),
      historySizes: sizes,
      ...(report
        ? { reportS: (report.to - report.from) / 1000, reportPeakMB: rss.peakBetween(report.from, report.to) }
        : {}),
      ...(alongside ? { alongside } : {}),
      ...(writes && writesAtStart
        ? {
            postgresWrites: {
              rowsPerS: (writes.rows - writesAtStart.rows) / wallS,
              commitsPerS: (writes.commits - writesAtStart.commits) / wallS,
            },
          }
        : {}),
      storeMB:
        (postgres
          ? await databaseBytes(storeUrl)
          : ['results.db', 'results.db-wal'].reduce(
              (sum, f) => sum + (fs.existsSync(path.join(dir, f)) ? fs.statSync(path.join(dir, f)).size : 0),
              0,
            )) / 1e6,
      overlapped: Math.min(...judge.requests.map((r) => r.at)) < lastCopilotCall,
      ...(cab
        ? { judgingS: judgingPhaseS(judge.requests, s.latencyMs), gaps: judgeGaps(judge.requests, s.latencyMs) }
        : {}),
      ...(judge.requests.length ? judgingWindow(judge.requests, s.latencyMs, started, rss.cpuBetween) : {}),
      activities,
      workerStart,
      ...(Number.isFinite(timeline.from) ? { workflowS: (timeline.to - timeline.from) / 1000 } : {}),
      startCallS,
      ...(Number.isFinite(timeline.firstTask) ? { firstWorkflowTaskS: (timeline.firstTask - started) / 1000 } : {}),
      ...(Number.isFinite(timeline.firstActivity) ? { firstActivityS: (timeline.firstActivity - started) / 1000 } : {}),
      sim: simSpanFigures(judge.requests, s.latencyMs),
      loopDelay: loop(),
    };
  } finally {
    // Each simulated endpoint's arrivals (ms) and refusals, for finding where 429s come from (docs/bench.md, pacing), and
    // when each answer's last byte left, so a judge slot's gaps between calls can be read again (client/benchSim.ts).
    fs.writeFileSync(
      path.join(dir, 'requests.json'),
      JSON.stringify([judge, ...copilots].map((sim) => sim.requests.map(requestLogEntry))),
    );
    await Promise.all(workers.map(stop));
    await postgres?.stop();
    await Promise.all([judge, ...copilots].map((sim: SimServer) => sim.close()));
    await server.stop();
  }
}

/** The reference's files as a user would name them; the judge priced at stated rates so cost can be compared between modes. */
function latticeFilesParts(files: NonNullable<RunScenario['latticeFiles']>): Record<string, unknown> {
  return {
    protocol: 'lattice',
    queries: files.queries,
    copilotsFrom: { dir: files.answersDir },
    copilots: [],
    lattice: { judging: files.judging },
    pricing: { 'sim-judge': BENCH_JUDGE_PRICE },
  };
}

/** Stated prices for the simulated judge (USD per million tokens), only so the modes' costs compare; not a real model's. */
export const BENCH_JUDGE_PRICE = { inputPerMTok: 1.25, outputPerMTok: 10 };

/** `queries` CryptoAnalystBench queries and one CSV holding every copilot's answer to each (imported, not asked). */
function cabJudgingParts(dir: string, s: RunScenario): Record<string, unknown> {
  const names = Array.from({ length: s.copilots }, (_, i) => `C${i + 1}`);
  const texts = Array.from(
    { length: s.queries },
    (_, k) => `Bench question ${k}: how do ETH staking yields compare with T-bills this month?`,
  );
  const queries = path.join(dir, 'queries.jsonl');
  fs.writeFileSync(
    queries,
    texts.map((text, k) => JSON.stringify({ id: `q${k}`, text, tags: 'Market' })).join('\n') + '\n',
  );
  const answers = path.join(dir, 'answers.csv');
  const rows = texts.map((text, k) => [text, ...names.map((n) => `${n} on question ${k}: yields moved, here is why.`)]);
  fs.writeFileSync(answers, toCsv([['query', ...names.map((n) => `${n}_response`)], ...rows]));
  return {
    protocol: 'cab',
    queries,
    copilots: names.map((name) => ({ name, type: 'csv', path: answers })),
    cab: { evaluationDate: '2026-01-15' },
  };
}

/** From the first judge request to the last judge answer (each answer leaves the simulator `latencyMs` after its request). */
function judgingPhaseS(requests: Array<{ at: number }>, latencyMs: number): number {
  const times = requests.map((r) => r.at);
  return (Math.max(...times) + latencyMs - Math.min(...times)) / 1000;
}

/**
 * From the simulated judge's log: how long a judge slot stood idle between one turn of a conversation and the next,
 * and between the end of one conversation and the start of the next on a freed slot (each start is matched with the
 * latest unmatched end before it). A request's answer leaves the simulator `latencyMs` after it arrived.
 */
export function judgeGaps(requests: Array<{ at: number; body: unknown }>, latencyMs: number): JudgeGaps {
  const units = new Map<string, number[]>();
  for (const r of requests) {
    const messages = (r.body as { messages?: unknown[] } | undefined)?.messages ?? [];
    const key = JSON.stringify(messages.slice(0, 2));
    units.set(key, [...(units.get(key) ?? []), r.at]);
  }
  const turnGaps: number[] = [];
  const spans: Array<{ start: number; end: number }> = [];
  for (const times of units.values()) {
    times.sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) turnGaps.push(times[i] - times[i - 1] - latencyMs);
    spans.push({ start: times[0], end: times[times.length - 1] + latencyMs });
  }
  const ends = spans.map((u) => u.end).sort((a, b) => a - b);
  const unitGaps: number[] = [];
  for (const start of spans.map((u) => u.start).sort((a, b) => a - b)) {
    let match = -1;
    for (let i = 0; i < ends.length && ends[i] <= start; i++) match = i;
    if (match < 0) continue; // a conversation started on a slot that was never busy
    unitGaps.push(start - ends[match]);
    ends.splice(match, 1);
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return { betweenTurnsMs: mean(turnGaps), betweenUnitsMs: mean(unitGaps) };
}

function writeQueries(dir: string, count: number): string {
  const lines = Array.from({ length: count }, (_, k) => {
    const task = (k % 16) + 1;
    const category = (Math.floor(k / 16) % 5) + 1;
    return JSON.stringify({
      id: `q${k}`,
      text: `Bench question ${k} for task ${task}, category ${category}: is staking ETH on Lido worth the risk?`,
      task: `T${task}`,
      category: `C${category}`,
    });
  });
  const file = path.join(dir, 'queries.jsonl');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** `judgeflow worker` in its own process; resolves once it polls. */
function startWorker(env: NodeJS.ProcessEnv, cwd: string, log: (line: string) => void): Promise<ChildProcess> {
  // This pid is the worker itself (see spawnWorkerProcess), so its CPU time and peak memory are the worker's.
  // JUDGEFLOW_BENCH_WORKER_NODE_ARGS: Node flags for the workers that NODE_OPTIONS does not take, e.g. "--cpu-prof
  // --cpu-prof-dir=/tmp/prof" (a V8 CPU profile of each worker thread, written when the worker stops).
  const nodeArgs = (process.env.JUDGEFLOW_BENCH_WORKER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawnWorkerProcess(
    path.join(REPO, 'bin', 'judgeflow.js'),
    env,
    { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
    nodeArgs,
  );
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4_000);
      if (output.includes('Worker polling')) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4_000)));
    child.once('exit', (code) => {
      log(output);
      reject(new Error(`the bench worker exited (${code}) before it polled`));
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  let bound: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((resolve) => (bound = setTimeout(resolve, 10_000)))]);
  clearTimeout(bound);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** A PostgreSQL database's size on disk (tables, indexes, TOAST). */
async function databaseBytes(url: string): Promise<number> {
  return Number((await onDatabase(url, 'SELECT pg_database_size(current_database()) AS bytes')).bytes);
}

/** Rows written (inserted, updated, deleted) and transactions committed in the database so far (pg_stat_database). */
async function databaseWrites(url: string): Promise<{ rows: number; commits: number }> {
  const row = await onDatabase(
    url,
    'SELECT tup_inserted + tup_updated + tup_deleted AS rows, xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()',
  );
  return { rows: Number(row.rows), commits: Number(row.commits) };
}

async function onDatabase(url: string, sql: string): Promise<Record<string, unknown>> {
  const { Client } = require('pg') as typeof import('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0];
  } finally {
    await client.end();
  }
}

/** The small run of RunScenario.alongside: the first `queries` of the big run's kind, its own queries file and output. */
function smallRunConfig(config: RunConfig, dir: string, queries: number): RunConfig {
  const smallDir = path.join(dir, 'small-run');
  fs.mkdirSync(smallDir, { recursive: true });
  return { ...config, queries: writeQueries(smallDir, queries), output: path.join(smallDir, 'runs') };
}

/** A history's size as the server counts it: its events, protobuf-encoded. */
function historyBytes(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): number {
  const { temporal } = require('@temporalio/proto') as typeof import('@temporalio/proto');
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/** When the run's report step started and ended (its writeReport activity), if this history holds it. */
function reportWindow(
  history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>,
): { from: number; to: number } | undefined {
  const events = history.events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'writeReport');
  if (!scheduled) return undefined;
  const id = Number(scheduled.eventId);
  const at = (e: (typeof events)[number]) =>
    Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
  const done = events.find((e) => Number(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? -1) === id);
  return done ? { from: at(scheduled), to: at(done) } : undefined;
}

/** When judging began and ended (s from the run's start), and the workers' CPU time per judge call in between. */
function judgingWindow(
  requests: Array<{ at: number }>,
  latencyMs: number,
  started: number,
  cpuBetween: (from: number, to: number) => number,
): Pick<RunFigures, 'firstJudgeS' | 'lastJudgeS' | 'judgingCpuMsPerCall'> {
  const times = requests.map((r) => r.at);
  const [first, last] = [Math.min(...times), Math.max(...times) + latencyMs];
  const cpu = cpuBetween(first, last);
  const inside = times.filter((t) => t >= first && t <= last).length;
  return {
    firstJudgeS: (first - started) / 1000,
    lastJudgeS: (last - started) / 1000,
    ...(Number.isFinite(cpu) ? { judgingCpuMsPerCall: cpu / inside } : {}),
  };
}

/**
 * Until the server lists a poller of `taskQueue`'s workflow tasks and one of its activity tasks, and has registered
 * the build `version` (0.9–1.1 s after the first poll on a quiet machine, 2026-12-03: the server records a new version
 * in the background), 60 s at most.
 */
async function untilPolling(client: Client, taskQueue: string, version: WorkerDeploymentVersion): Promise<void> {
  const until = Date.now() + 60_000;
  const polled = async (taskQueueType: number) =>
    (
      (
        await client.workflowService.describeTaskQueue({
          namespace: client.options.namespace,
          taskQueue: { name: taskQueue },
          taskQueueType,
        })
      ).pollers ?? []
    ).length > 0;
  // 1: TASK_QUEUE_TYPE_WORKFLOW, 2: TASK_QUEUE_TYPE_ACTIVITY
  const registered = () =>
    client.workflowService
      .describeWorkerDeploymentVersion({ namespace: client.options.namespace, deploymentVersion: version })
      .then(
        () => true,
        () => false,
      );
  // And current: the worker makes its build its deployment's current one once it polls (worker/versioning.ts). A user's
  // long-lived worker did that long before a run; a start sent while the server is still switching took 0.2 s instead
  // of 0.01 s in the bench.
  const current = () =>
    client.workflowService
      .describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: version.deploymentName })
      .then(
        (d) => d.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId === version.buildId,
        () => false,
      );
  while (!((await polled(1)) && (await polled(2)) && (await registered()) && (await current()))) {
    if (Date.now() > until) throw new Error(`no worker polled task queue ${taskQueue} within 60 s of its start`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The first workflow task started, the first activity started, and the first and last event, over the run's histories (ms). */
function historyTimeline(
  history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>,
  t: { firstTask: number; firstActivity: number; from: number; to: number },
): void {
  const at = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
    Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
  for (const e of history.events ?? []) {
    t.from = Math.min(t.from, at(e));
    t.to = Math.max(t.to, at(e));
    if (e.workflowTaskStartedEventAttributes) t.firstTask = Math.min(t.firstTask, at(e));
    if (e.activityTaskStartedEventAttributes) t.firstActivity = Math.min(t.firstActivity, at(e));
  }
}

/** Each activity type's count and span in one history, merged into `spans` (seconds from `started`). */
function activitySpans(
  history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>,
  started: number,
  spans: Record<string, ActivitySpan>,
): void {
  const at = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
    (Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6) - started) / 1000;
  const typeOf = new Map<number, string>();
  for (const e of history.events ?? []) {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) {
      typeOf.set(Number(e.eventId), scheduled);
      const span = (spans[scheduled] ??= { count: 0, fromS: at(e), toS: at(e) });
      span.count++;
      span.fromS = Math.min(span.fromS, at(e));
    }
    const done = e.activityTaskCompletedEventAttributes?.scheduledEventId;
    const type = done != null ? typeOf.get(Number(done)) : undefined;
    if (type) spans[type].toS = Math.max(spans[type].toS, at(e));
  }
}

/** The workers' resident memory every half second (VmRSS), to read the peak of a window of the run. */
function sampleRss(workers: ChildProcess[]): {
  stop(): void;
  peakBetween(from: number, to: number): number;
  cpuBetween(from: number, to: number): number;
} {
  const samples: Array<{ at: number; mb: number }> = [];
  const cpu: Array<{ at: number; ms: number }> = [];
  const take = () => {
    let ms = 0;
    for (const w of workers) {
      const line = fs.existsSync(`/proc/${w.pid}/status`)
        ? fs.readFileSync(`/proc/${w.pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)
        : null;
      if (line) samples.push({ at: Date.now(), mb: Number(line[1]) / 1024 });
      ms += fs.existsSync(`/proc/${w.pid}/stat`) ? cpuMs(w.pid!) : 0;
    }
    cpu.push({ at: Date.now(), ms });
  };
  const timer = setInterval(take, 500);
  return {
    stop: () => clearInterval(timer),
    peakBetween: (from, to) =>
      Math.max(0, ...samples.filter((x) => x.at >= from - 500 && x.at <= to + 500).map((x) => x.mb)),
    // The workers' CPU time between the samples nearest inside [from, to] (half a second's sampling each end).
    cpuBetween: (from, to) => {
      const inside = cpu.filter((x) => x.at >= from && x.at <= to);
      return inside.length > 1 ? inside[inside.length - 1].ms - inside[0].ms : NaN;
    },
  };
}

/** User + system CPU time of a live process (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Peak resident memory of a live process (VmHWM). */
function peakMB(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
  return line ? Number(line[1]) / 1024 : NaN;
}
