import crypto from 'node:crypto';
import type { StoredRunConfig } from '../activities/deps';
import { benchmarkRun } from '../workflows';
import { progressQuery } from '../contract/control';
import type { QueryDefinition } from '@temporalio/common';
import type { BenchmarkRunInput, RunResult } from '../contract/run';
import { progressView, type ProgressMode, type ProgressView, type StageProgress } from './progress';
import { runWorkflow } from './runWorkflow';
import { openAttachedRuns } from './runIdentity';
import { runPriority } from './runPriority';

export function newRunId(protocol: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${protocol}-${stamp}-${crypto.randomBytes(3).toString('hex')}`;
}

/** The workflow input: the validated config (names of secrets' variables, never their values). */
export function runInput(
  config: StoredRunConfig,
  runId: string,
  extra: { sourceRunId?: string; reuseJudgments?: boolean; resumeFromStore?: boolean; runKey?: string } = {},
): BenchmarkRunInput<StoredRunConfig> {
  return {
    runId,
    config,
    ...(extra.runKey ? { runKey: extra.runKey } : {}),
    ...(extra.sourceRunId ? { sourceRunId: extra.sourceRunId } : {}),
    ...(extra.reuseJudgments ? { reuseJudgments: true } : {}),
    ...(extra.resumeFromStore ? { resumeFromStore: true } : {}),
  };
}

export interface StartOptions {
  /** A loaded run config (client/config.ts), or a stored run's (resume). */
  config: StoredRunConfig;
  detach?: boolean;
  sourceRunId?: string;
  reuseJudgments?: boolean;
  /** Continue an existing run from what the results store holds (judgeflow resume). */
  resumeFromStore?: boolean;
  runId?: string;
  /** Where progress lines go (stderr when stdout carries JSON). */
  print: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  /** Bars on a terminal, lines otherwise (see progressMode); default lines. */
  progress?: ProgressMode;
  /** The run's identity (client/runIdentity.ts), kept in its record and its workflow's memo so the same command finds it again. */
  runKey?: string;
  /** Attach to the open run `runId` (same key) instead of starting one. */
  attach?: boolean;
  /** `--priority`: over the config's priority (client/runPriority.ts). */
  priority?: number;
}

/** Start a benchmark run; unless detached, also run a worker in this process and wait for the run to finish. */
export async function startBenchmark(options: StartOptions): Promise<{ runId: string; result?: RunResult }> {
  const runId = options.runId ?? newRunId(options.config.protocol);
  // --priority is kept with the run's config, so a resume queues it where it was.
  const config = options.priority ? { ...options.config, priority: options.priority } : options.config;
  const result = await runWorkflow({
    workflow: benchmarkRun,
    workflowId: runId,
    input: runInput(config, runId, options),
    detach: Boolean(options.detach),
    attach: options.attach,
    print: options.print,
    env: options.env,
    // `attached`: this run has no `judgeflow worker` of its own; another attached process finishes it if this one dies.
    priority: runPriority(runId, config.priority),
    memo: { ...(options.runKey ? { runKey: options.runKey } : {}), attached: !options.detach },
    orphans: (client, queue) => openAttachedRuns(client, queue, runId),
    wait: (handle) => watch(handle, progressView(options.progress ?? 'lines', options.print)),
  });
  return { runId, result };
}

/** Show progress (bars or lines, see client/progress.ts) until the workflow ends. */
export async function watch<P extends StageProgress, R>(
  handle: { query: (q: QueryDefinition<P>) => Promise<P>; result: () => Promise<R> },
  view: ProgressView,
  onProgress?: (p: P) => void | Promise<void>,
  query: QueryDefinition<P> = progressQuery as unknown as QueryDefinition<P>,
): Promise<R> {
  let finished = false;
  const resultPromise = handle.result().finally(() => (finished = true));
  try {
    while (!finished) {
      let tick: NodeJS.Timeout | undefined; // cleared when the result comes first, so it keeps no process alive
      await Promise.race([resultPromise.catch(() => undefined), new Promise((r) => (tick = setTimeout(r, 500)))]);
      clearTimeout(tick);
      if (finished) break;
      const p = await handle.query(query).catch(() => undefined);
      if (!p) continue;
      await onProgress?.(p);
      view.update(p);
    }
    // The last state (every item done) is worth drawing before the bars stop.
    const last = await handle.query(query).catch(() => undefined);
    if (last) view.update(last);
    return await resultPromise;
  } finally {
    view.stop();
  }
}
