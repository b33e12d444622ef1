import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { openNew, type StoreTarget } from '../stores';
import { renderReport } from '../services/runReport';
import { outageTolerantStore } from '../activities/storeOutage';

/**
 * A run's report rendered on a thread of its own, with its own connection to the results store. The statistics of a
 * large report (BCa bootstrap intervals, permutation tests) are seconds of synchronous work; on the activity's thread
 * they would stop its heartbeats (a report heartbeat timeout of 30 s was missed under load) and every other activity of
 * the worker. Here the activity's thread only waits, heartbeating, and the report is the same: renderReport, unchanged.
 *
 * Used by the worker when it runs compiled (dist/), or always with JUDGEFLOW_REPORT_THREAD=1 (run from the sources, the
 * thread compiles them with tsx, as bin/judgeflow.js does); JUDGEFLOW_REPORT_THREAD=0 renders on the activity's thread.
 */
export interface RenderedReport {
  reportPath: string;
  summary: Record<string, number | null>;
}

interface ThreadInput {
  judgeflowReportThread: true;
  target: StoreTarget;
  /** The run to render; absent, the thread loads the report's modules and waits for it as a message (a spare). */
  runId?: string;
}

type ThreadAnswer =
  | { ok: true; result: RenderedReport }
  | { ok: false; error: { name: string; message: string; stack?: string; code?: unknown } };

const FROM_SOURCE = __filename.endsWith('.ts');

/** Whether reports go to a thread in a worker started with `env` (see above). */
export function reportThreadEnabled(env: NodeJS.ProcessEnv): boolean {
  const setting = env.JUDGEFLOW_REPORT_THREAD?.trim();
  return setting === '1' || (setting !== '0' && !FROM_SOURCE);
}

function spawnThread(target: StoreTarget, env: NodeJS.ProcessEnv, runId?: string): Worker {
  const input: ThreadInput = { judgeflowReportThread: true, target, ...(runId === undefined ? {} : { runId }) };
  const options = { workerData: input, env: { ...env } };
  return FROM_SOURCE
    ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(__filename)});`, { ...options, eval: true })
    : new Worker(__filename, options);
}

/** A run's report rendered on a new thread (one report per thread). */
export function renderReportInThread(
  target: StoreTarget,
  env: NodeJS.ProcessEnv,
  runId: string,
  signal?: AbortSignal,
): Promise<RenderedReport> {
  return answerOf(spawnThread(target, env, runId), runId, signal);
}

/** How long a spare thread waits for a report before it ends (its modules hold about 35 MB). */
const SPARE_IDLE_MS = 10 * 60_000;

/**
 * The worker's report threads: `warm()` (called as judging starts) starts a spare thread that loads the report's
 * modules while the run is still judging, so the report of a run that ends soon starts at once instead of after that
 * load (0.34 s on a quiet machine, 2026-12-03, of a 1.6 s report of 1,200 × 4 answers). A spare renders one report;
 * the next `warm()` starts another. An idle spare does not keep the process alive and ends after SPARE_IDLE_MS.
 */
export class ReportThreads {
  private spare?: { thread: Worker; idle: ReturnType<typeof setTimeout> };
  private closed = false;

  constructor(
    private readonly target: StoreTarget,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Whether a spare thread is started and waiting. */
  get warmed(): boolean {
    return this.spare !== undefined;
  }

  warm(): void {
    if (this.spare || this.closed) return;
    const thread = spawnThread(this.target, this.env);
    thread.unref();
    const idle = setTimeout(() => this.drop(thread, true), SPARE_IDLE_MS);
    idle.unref();
    // A spare that failed to start is dropped here; the report then starts a thread of its own, which says why.
    thread.once('error', () => this.drop(thread, false));
    thread.once('exit', () => this.drop(thread, false));
    this.spare = { thread, idle };
  }

  render(runId: string, signal?: AbortSignal): Promise<RenderedReport> {
    const spare = this.spare;
    if (!spare) return renderReportInThread(this.target, this.env, runId, signal);
    this.spare = undefined;
    clearTimeout(spare.idle);
    spare.thread.removeAllListeners('error').removeAllListeners('exit');
    spare.thread.ref();
    const answer = answerOf(spare.thread, runId, signal);
    spare.thread.postMessage({ runId });
    return answer;
  }

  /**
   * Ends the spare (its worker has stopped): a worker run in a longer-lived process (`judgeflow dev`, a test file) would
   * otherwise leave it there for SPARE_IDLE_MS, and Node stops every such thread as the process exits (tens of them
   * kept a jest worker past jest's 0.5 s wait for it to exit). A report already handed to a thread finishes.
   */
  async close(): Promise<void> {
    this.closed = true;
    const spare = this.spare;
    if (!spare) return;
    this.drop(spare.thread, false);
    await spare.thread.terminate();
  }

  private drop(thread: Worker, terminate: boolean): void {
    if (this.spare?.thread !== thread) return;
    clearTimeout(this.spare.idle);
    this.spare = undefined;
    if (terminate) void thread.terminate();
  }
}

/** The one answer of a report thread (it is terminated once it answered, failed or the signal aborted). */
function answerOf(thread: Worker, runId: string, signal?: AbortSignal): Promise<RenderedReport> {
  return new Promise<RenderedReport>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
      void thread.terminate();
    };
    const onAbort = () => settle(() => reject(signal!.reason));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.once('message', (answer: ThreadAnswer) =>
      settle(() =>
        answer.ok
          ? resolve(answer.result)
          : reject(
              Object.assign(new Error(answer.error.message), {
                name: answer.error.name,
                stack: answer.error.stack,
                ...(answer.error.code !== undefined ? { code: answer.error.code } : {}),
              }),
            ),
      ),
    );
    thread.once('error', (error) => settle(() => reject(error)));
    thread.once('exit', (code) =>
      settle(() => reject(new Error(`the report thread of run ${runId} exited (code ${code}) before it answered`))),
    );
  });
}

async function serve(input: ThreadInput & { runId: string }): Promise<void> {
  const store = openNew(input.target);
  let answer: ThreadAnswer;
  try {
    // An unreachable database is waited for here too, as by every activity (activities/storeOutage.ts).
    answer = {
      ok: true,
      result: await renderReport({ store: outageTolerantStore(store), env: process.env }, input.runId),
    };
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    answer = {
      ok: false,
      error: { name: e.name, message: e.message, stack: e.stack, code: (e as { code?: unknown }).code },
    };
  } finally {
    await store.close().catch(() => undefined);
  }
  parentPort!.postMessage(answer);
}

if (!isMainThread && (workerData as ThreadInput | undefined)?.judgeflowReportThread) {
  const input = workerData as ThreadInput;
  if (input.runId !== undefined) void serve({ ...input, runId: input.runId });
  else parentPort!.once('message', ({ runId }: { runId: string }) => void serve({ ...input, runId }));
}
