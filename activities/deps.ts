import path from 'node:path';
import type { JudgeConfig } from '../core/judgeConfig';
import type { ModelEndpoint } from '../core/llm';
import { consensusJudgments, type PanelAggregate } from '../core/consensus';
import type { StoredJudgment } from '../core/types';
import type { LoadedRubric, ProtocolModule } from '../core/protocol';
import { FIRST_SLOT, type JudgeSlot, type ResultsStore, type RunRecord } from '../core/store';
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

/** A judge of the run: the panel member of that name, or the run's one `judge` (named ''). */
export type RunJudge = JudgeConfig & { name: string };

/** Every judge of a run (a run without a panel has one, named ''). */
export function runJudges(config: StoredRunConfig): RunJudge[] {
  return [{ ...config.judge, name: '' }];
}

/**
 * One verdict per query × copilot of a run, as every report, compare, study and prune reads them: each judge's mean over
 * its successful samples, then the panel's aggregate (see core/consensus.ts).
 */
export async function consensusVerdicts(store: ResultsStore, run: RunRecord): Promise<StoredJudgment[]> {
  return consensusJudgments(await store.judgments(run.runId, run.rubricVersion), panelAggregate(run.config as StoredRunConfig));
}

/** How a panel's judges are combined into the reported score (a single judge: its own mean). */
export function panelAggregate(_config: StoredRunConfig): PanelAggregate {
  return 'mean';
}

/** How many independent samples of every unit each judge is asked for (1 for runs made before samples existed). */
export function runSamples(config: StoredRunConfig): number {
  return config.judge.samples ?? 1;
}

/**
 * How the judge of `slot` is asked. Sample 0 keeps the seed and cache key a run without samples had (so re-judging an
 * older run reuses its answers); later samples get their own seed and cache key, so they are independent asks.
 */
export function judgeEndpoint(run: RunRecord & { config: StoredRunConfig }, slot: JudgeSlot = FIRST_SLOT): ModelEndpoint {
  const j = runJudges(run.config).find((x) => x.name === slot.judge);
  if (!j) throw new Error(`run ${run.runId} has no judge named "${slot.judge}"`);
  const variant = [slot.judge ? `judge:${slot.judge}` : '', slot.sample ? `sample:${slot.sample}` : ''].filter(Boolean).join(' ');
  return {
    baseURL: j.baseURL,
    model: j.model,
    apiKeyEnv: j.apiKeyEnv,
    temperature: slot.judge ? (j.temperature === undefined ? run.judge.temperature : j.temperature) : run.judge.temperature,
    timeoutMs: j.timeoutMs,
    responseFormat: j.responseFormat,
    maxTokens: j.maxTokens,
    maxTokensParam: j.maxTokensParam,
    seed: j.sendSeed === false ? null : seedNumber(slot.sample ? `${run.config.seed}:sample:${slot.sample}` : run.config.seed),
    ...(variant ? { cacheVariant: variant } : {}),
  };
}

/** A provider seed (a non-negative 31-bit integer) derived from the run seed, so a re-run asks with the same seed. */
export function seedNumber(seed: string): number {
  return parseInt(contentHash(seed, 8), 16) & 0x7fffffff;
}

export function runDir(run: RunRecord & { config: StoredRunConfig }): string {
  return path.join(run.config.output, run.runId);
}
