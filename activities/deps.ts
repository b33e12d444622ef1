import path from 'node:path';
import type { RunConfig } from '../core/config';
import type { ModelEndpoint } from '../core/llm';
import type { LoadedRubric } from '../core/protocol';
import type { ResultsStore, RunRecord } from '../core/store';
import { protocolFor } from '../rubrics';
import { contentHash } from '../core/validate';

/** What every activity needs; the worker builds one per process. Secrets are read from `env` inside activities only. */
export interface ActivityDeps {
  store: ResultsStore;
  env: NodeJS.ProcessEnv;
}

/** The config stored with a run (validated and path-resolved before the run started). */
export type StoredRunConfig = RunConfig & { reuseJudgments?: boolean };

export function requireRun(deps: ActivityDeps, runId: string): RunRecord & { config: StoredRunConfig } {
  const run = deps.store.getRun(runId);
  if (!run) throw new Error(`run ${runId} is not in the results store ${deps.store.file}; was the worker started with another JUDGEFLOW_HOME?`);
  return run as RunRecord & { config: StoredRunConfig };
}

const rubricCache = new Map<string, LoadedRubric>();
/** The exact rubric a run started with, rebuilt from the store (files on disk may have changed since). */
export function runRubric(deps: ActivityDeps, run: RunRecord): LoadedRubric {
  let rubric = rubricCache.get(run.rubricVersion);
  if (!rubric) {
    const stored = deps.store.getRubric(run.rubricVersion);
    if (!stored) throw new Error(`rubric ${run.rubricVersion} of run ${run.runId} is not in the results store`);
    const protocol = protocolFor(stored.protocol);
    rubric = protocol.rubricFromContent(stored.content as Record<string, unknown>, protocol.defaultRubricDir);
    rubricCache.set(run.rubricVersion, rubric);
  }
  return rubric;
}

export function judgeEndpoint(run: RunRecord & { config: StoredRunConfig }): ModelEndpoint {
  const j = run.config.judge;
  return {
    baseURL: j.baseURL,
    model: j.model,
    apiKeyEnv: j.apiKeyEnv,
    temperature: run.judge.temperature,
    timeoutMs: j.timeoutMs,
    responseFormat: j.responseFormat,
    maxTokens: j.maxTokens,
    maxTokensParam: j.maxTokensParam,
    seed: j.sendSeed === false ? null : seedNumber(run.config.seed),
  };
}

/** A provider seed (a non-negative 31-bit integer) derived from the run seed, so a re-run asks with the same seed. */
export function seedNumber(seed: string): number {
  return parseInt(contentHash(seed, 8), 16) & 0x7fffffff;
}

export function runDir(run: RunRecord & { config: StoredRunConfig }): string {
  return path.join(run.config.output, run.runId);
}
