import os from 'node:os';
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads';
import { moduleThread } from './moduleThread';
import { meanCI, type IntervalMethod, type MeanInterval } from '../core/stats/stats';
import {
  precomputedIntervals,
  type IntervalRequest,
  type IntervalsAhead,
  type PendingIntervals,
} from '../core/stats/intervalsAhead';

/**
 * A second thread for a report's bootstrap intervals (core/stats/intervalsAhead.ts). The report thread hands it the
 * intervals its protocol will ask for as soon as it has read the verdicts; the helper computes them, largest first, while
 * the report thread reads the answers and the rest, then the report thread takes what is left. A small machine's second
 * core is otherwise idle through most of a report (the worker's thread only writes responses.jsonl), and the bootstraps
 * were a third of a 1,200 × 4 LATTICE report (issue 29, docs/bench.md).
 *
 * The two threads share one counter over the requests (who takes the next) and one slot per request for its interval,
 * so the report thread waits at most for the one request the helper is computing, never for a message: a helper still
 * busy with an earlier report's requests costs nothing but the core. JUDGEFLOW_REPORT_INTERVAL_THREAD=0 turns it off.
 */

interface HelperJob {
  requests: IntervalRequest[];
  /** Request indices, largest first (the order both threads take them in). */
  order: number[];
  /** Int32 [next position in `order`, stopped]. */
  control: SharedArrayBuffer;
  /** Int32 per request: 0 not done, 1 an interval, 2 none (null). */
  states: SharedArrayBuffer;
  /** Float64 per request: low, high. */
  bounds: SharedArrayBuffer;
  /** Int8 per request: the method's index in METHODS. */
  methods: SharedArrayBuffer;
}

const METHODS: IntervalMethod[] = ['t', 'bca', 'percentile', 'studentized'];
/** The longest the report thread waits for one request the helper took (a stalled helper: then it computes it itself). */
const WAIT_MS = 10_000;

/** Whether a report thread started with `env` gets a helper: on a machine of more than one core, unless turned off. */
export function intervalHelperEnabled(env: NodeJS.ProcessEnv): boolean {
  return env.JUDGEFLOW_REPORT_INTERVAL_THREAD?.trim() !== '0' && os.availableParallelism() > 1;
}

/** Takes the job's next request, or -1 once all are taken or the job stopped. */
function take(job: HelperJob, control: Int32Array): number {
  if (Atomics.load(control, 1)) return -1;
  const position = Atomics.add(control, 0, 1);
  return position < job.order.length ? job.order[position] : -1;
}

function compute(job: HelperJob, index: number): void {
  const r = job.requests[index];
  const interval = meanCI(r.values, {
    seed: r.seed,
    iterations: r.iterations,
    level: r.level,
    ...(r.method ? { method: r.method } : {}),
  });
  const states = new Int32Array(job.states);
  if (interval) {
    new Float64Array(job.bounds).set([interval.low, interval.high], 2 * index);
    new Int8Array(job.methods)[index] = METHODS.indexOf(interval.method);
  }
  Atomics.store(states, index, interval ? 1 : 2);
  Atomics.notify(states, index);
}

function newJob(requests: IntervalRequest[]): HelperJob {
  const n = requests.length;
  return {
    requests,
    order: requests.map((_, i) => i).sort((a, b) => requests[b].values.length - requests[a].values.length),
    control: new SharedArrayBuffer(8),
    states: new SharedArrayBuffer(4 * n),
    bounds: new SharedArrayBuffer(16 * n),
    methods: new SharedArrayBuffer(n),
  };
}

export class IntervalHelper {
  private readonly thread: Worker;
  private dead = false;
  private last?: Int32Array;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    const options = { workerData: { judgeflowIntervalHelper: true }, env: { ...env } };
    this.thread = moduleThread(__filename, options);
    // It never keeps its process alive, and a failed helper only means the report thread computes everything.
    this.thread.unref();
    this.thread.on('error', () => (this.dead = true));
    this.thread.on('exit', () => (this.dead = true));
  }

  /** Starts the helper on `requests` (an earlier report's requests it has not taken are dropped). */
  start(requests: IntervalRequest[]): PendingIntervals {
    const job = newJob(requests);
    const control = new Int32Array(job.control);
    if (this.last) Atomics.store(this.last, 1, 1);
    this.last = control;
    // Without a helper (it failed or was closed), finish() takes every request itself.
    if (!this.dead && requests.length) this.thread.postMessage(job);
    return {
      cancel: () => Atomics.store(control, 1, 1),
      finish: () => finish(job, control),
    };
  }

  close(): Promise<number> {
    return this.thread.terminate();
  }
}

/** The report thread's part: every request not yet taken, then the helper's, each waited for (WAIT_MS at most). */
function finish(job: HelperJob, control: Int32Array): IntervalsAhead {
  const mine = new Set<number>();
  for (let index = take(job, control); index >= 0; index = take(job, control)) {
    mine.add(index);
    compute(job, index);
  }
  // Stopped (cancelled, or the helper gone): what remains untaken is computed inside buildReport, as without a helper.
  Atomics.store(control, 1, 1);
  const states = new Int32Array(job.states);
  const bounds = new Float64Array(job.bounds);
  const methods = new Int8Array(job.methods);
  const done: Array<[IntervalRequest, MeanInterval | null]> = [];
  const taken = Math.min(Atomics.load(control, 0), job.order.length);
  for (let position = 0; position < taken; position++) {
    const index = job.order[position];
    if (!mine.has(index)) Atomics.wait(states, index, 0, WAIT_MS);
    const state = Atomics.load(states, index);
    if (state === 0) continue;
    const n = job.requests[index].values.length;
    done.push([
      job.requests[index],
      state === 2 ? null : { low: bounds[2 * index], high: bounds[2 * index + 1], n, method: METHODS[methods[index]] },
    ]);
  }
  return precomputedIntervals(done);
}

if (!isMainThread && (workerData as { judgeflowIntervalHelper?: boolean } | undefined)?.judgeflowIntervalHelper) {
  parentPort!.on('message', (job: HelperJob) => {
    const control = new Int32Array(job.control);
    for (let index = take(job, control); index >= 0; index = take(job, control)) compute(job, index);
  });
}
