import crypto from 'node:crypto';
import type { RunConfig } from '../core/config';
import { benchmarkRun, progressQuery } from '../workflows';
import type { BenchmarkRunInput, Progress, RunResult } from '../workflows/types';
import { runWorkflow } from './runWorkflow';

export function newRunId(protocol: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${protocol}-${stamp}-${crypto.randomBytes(3).toString('hex')}`;
}

/** The workflow input: the validated config (names of secrets' variables, never their values). */
export function runInput(config: RunConfig, runId: string, extra: { sourceRunId?: string; reuseJudgments?: boolean } = {}): BenchmarkRunInput {
  return {
    runId,
    config: config as unknown as BenchmarkRunInput['config'],
    ...(extra.sourceRunId ? { sourceRunId: extra.sourceRunId } : {}),
    ...(extra.reuseJudgments ? { reuseJudgments: true } : {}),
  };
}

export interface StartOptions {
  config: RunConfig;
  detach?: boolean;
  sourceRunId?: string;
  reuseJudgments?: boolean;
  runId?: string;
  /** Where progress lines go (stderr when stdout carries JSON). */
  print: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

/** Start a benchmark run; unless detached, also run a worker in this process and wait for the run to finish. */
export async function startBenchmark(options: StartOptions): Promise<{ runId: string; result?: RunResult }> {
  const runId = options.runId ?? newRunId(options.config.protocol);
  const result = await runWorkflow({
    workflow: benchmarkRun,
    workflowId: runId,
    input: runInput(options.config, runId, options),
    detach: Boolean(options.detach),
    print: options.print,
    env: options.env,
    wait: (handle) => watch(handle, options.print),
  });
  return { runId, result };
}

/** Print progress whenever it changes until the workflow ends. */
export async function watch(
  handle: { query: (q: typeof progressQuery) => Promise<Progress>; result: () => Promise<RunResult> },
  print: (line: string) => void,
  onProgress?: (p: Progress) => void | Promise<void>,
): Promise<RunResult> {
  let finished = false;
  const resultPromise = handle.result().finally(() => (finished = true));
  let last = '';
  while (!finished) {
    await Promise.race([resultPromise.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
    if (finished) break;
    const p = await handle.query(progressQuery).catch(() => undefined);
    if (p) await onProgress?.(p);
    const line = p ? describeProgress(p) : '';
    if (line && line !== last) print(line);
    last = line || last;
  }
  return resultPromise;
}

export function describeProgress(p: Progress): string {
  if (p.stage === 'load') return '[load] reading the snapshot and rubric';
  return `[${p.stage}] ${p.done}/${p.total} done${p.failures ? `, ${p.failures} failed` : ''}`;
}
