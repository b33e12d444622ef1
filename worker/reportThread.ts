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
  runId: string;
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

export function renderReportInThread(
  target: StoreTarget,
  env: NodeJS.ProcessEnv,
  runId: string,
  signal?: AbortSignal,
): Promise<RenderedReport> {
  const input: ThreadInput = { judgeflowReportThread: true, target, runId };
  const options = { workerData: input, env: { ...env } };
  const thread = FROM_SOURCE
    ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(__filename)});`, { ...options, eval: true })
    : new Worker(__filename, options);
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

async function serve(input: ThreadInput): Promise<void> {
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

if (!isMainThread && (workerData as ThreadInput | undefined)?.judgeflowReportThread)
  void serve(workerData as ThreadInput);
