import path from 'node:path';
import type { JudgeConfig } from '../core/judgeConfig';
import type { ModelEndpoint } from '../core/llm';
import type { LoadedRubric, ProtocolModule } from '../core/protocol';
import type { ResultsStore, RunRecord } from '../core/store';
import { storedRubric } from '../rubrics/storedRubric';
import { contentHash } from '../core/hashing';
import type { Pricing } from '../core/cost';
import type { CopilotConfig } from './adapters';

/** What every activity needs; the worker builds one per process. Secrets are read from `env` inside activities only. */
export interface ActivityDeps {
  store: ResultsStore;
  env: NodeJS.ProcessEnv;
}

/** The config stored with a run (validated and path-resolved by client/config.ts before the run started). */
export interface StoredRunConfig {
  protocol: string;
  queries: string;
  judge: JudgeConfig;
  copilots: CopilotConfig[];
  output: string;
  rubric?: string;
  seed: string;
  chunkSize: number;
  simulated: boolean;
  reuseJudgments?: boolean;
  pricing?: Pricing;
}

/**
 * The protocol's run options: its config section (`cab: {...}`), defaults filled in. Runs stored before options had
 * their own section kept them at the top level, so those keys are read from there.
 */
export function protocolOptions(protocol: ProtocolModule, config: StoredRunConfig): Record<string, unknown> {
  const stored = config as unknown as Record<string, unknown>;
  const legacy = Object.fromEntries(Object.keys(protocol.optionsSchema.shape).filter((k) => k in stored).map((k) => [k, stored[k]]));
  const section = stored[protocol.id];
  return protocol.optionsSchema.parse({ ...legacy, ...(section && typeof section === 'object' ? section : {}) });
}

export async function requireRun(deps: ActivityDeps, runId: string): Promise<RunRecord & { config: StoredRunConfig }> {
  const run = await deps.store.getRun(runId);
  if (!run) throw new Error(`run ${runId} is not in the results store ${deps.store.location}; was the worker started with another JUDGEFLOW_HOME?`);
  return run as RunRecord & { config: StoredRunConfig };
}

/** The exact rubric a run started with (see storedRubric). */
export async function requireRubric(deps: ActivityDeps, run: RunRecord): Promise<LoadedRubric> {
  const rubric = await storedRubric(deps.store, run.rubricVersion);
  if (!rubric) throw new Error(`rubric ${run.rubricVersion} of run ${run.runId} is not in the results store ${deps.store.location}`);
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
