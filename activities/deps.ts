import path from 'node:path';
import { minJudgesOf, type JudgeConfig } from '../core/llm/judgeConfig';
import type { ModelEndpoint } from '../core/llm/client';
import { consensusJudgments, type PanelAggregate } from '../core/stats/consensus';
import type { IntervalRequest, PendingIntervals } from '../core/stats/intervalsAhead';
import type { StoredJudgment } from '../core/model/types';
import type { LoadedRubric, ProtocolModule } from '../core/model/protocol';
import { FIRST_SLOT, type JudgeSlot, type ResultsStore, type RunRecord } from '../core/model/store';
import { storedRubric } from '../rubrics/storedRubric';
import { contentHash } from '../core/model/hashing';
import type { CopilotConfig } from './adapters';
import { liftLegacyOptions, type RecordedRunKeys, type RunConfigKeys } from '../core/model/runConfig';
import { groundingRubricFromContent, type GroundingRubric } from '../rubrics/grounding';

/** What every activity needs; the worker builds one per process. Secrets are read from `env` inside activities only. */
export interface ActivityDeps {
  store: ResultsStore;
  env: NodeJS.ProcessEnv;
  /**
   * Renders a run's report away from the activity's thread (the worker's report thread, worker/reportThread.ts), so
   * its seconds of statistics do not stop the activity's heartbeats; absent, writeReport renders it in place.
   * `writeResponses`, given, writes the report's responses.jsonl meanwhile on the activity's thread, idle otherwise
   * (services/runReport.ts writeResponsesBeside), and returns the file, which the report moves in.
   */
  renderReport?: (
    runId: string,
    signal: AbortSignal,
    writeResponses?: () => Promise<string>,
  ) => Promise<{ reportPath: string; summary: Record<string, number | null> }>;
  /** Judging has started: a report may follow soon, so renderReport gets ready for it (the worker's spare thread). */
  warmReport?: (runId: string) => void;
  /**
   * Starts computing a report's intervals elsewhere while it reads the rest of the store (the report thread's helper,
   * worker/intervalHelper.ts; core/stats/intervalsAhead.ts); absent, buildReport computes them as it goes.
   */
  intervalsAhead?: (requests: IntervalRequest[]) => PendingIntervals;
}

/**
 * The config stored with a run: the run config (validated and path-resolved by client/config.ts before the run
 * started) with what the run record adds. Runs stored before maxAnswerChars and storeOutageMinutes existed lack them
 * (read as DEFAULT_MAX_ANSWER_CHARS and 30).
 */
export type StoredRunConfig = Omit<RunConfigKeys<CopilotConfig>, 'maxAnswerChars' | 'storeOutageMinutes'> &
  Partial<Pick<RunConfigKeys<CopilotConfig>, 'maxAnswerChars' | 'storeOutageMinutes'>> &
  RecordedRunKeys &
  Record<string, unknown>;

/**
 * The protocol's run options: its config section (`cab: {...}`), defaults filled in. Runs stored before options had
 * their own section kept them at the top level, so those keys are read from there.
 */
export function protocolOptions(protocol: ProtocolModule, config: StoredRunConfig): Record<string, unknown> {
  return protocol.optionsSchema.parse(liftLegacyOptions(protocol, config)[protocol.id] ?? {});
}

export async function requireRun(deps: ActivityDeps, runId: string): Promise<RunRecord & { config: StoredRunConfig }> {
  const run = await deps.store.getRun(runId);
  if (!run)
    throw new Error(
      `run ${runId} is not in the results store ${deps.store.location}; was the worker started with another JUDGEFLOW_HOME?`,
    );
  return withStoredConfig(run);
}

/**
 * A run record with its config typed: the store keeps it as JSON (`unknown`); it was a validated run config when
 * stored (prepareRun, replaceRunConfig), so it is read back as one. The one place the stored config is typed.
 */
export function withStoredConfig(run: RunRecord): RunRecord & { config: StoredRunConfig } {
  return run as RunRecord & { config: StoredRunConfig };
}

/** The exact rubric a run started with (see storedRubric). */
export async function requireRubric(deps: ActivityDeps, run: RunRecord): Promise<LoadedRubric> {
  const rubric = await storedRubric(deps.store, run.rubricVersion);
  if (!rubric)
    throw new Error(
      `rubric ${run.rubricVersion} of run ${run.runId} is not in the results store ${deps.store.location}`,
    );
  return rubric;
}

/** A judge of the run: the panel member of that name, or the run's one `judge` (named ''). */
export type RunJudge = Omit<JudgeConfig, 'samples'> & { name: string; family?: string };

/** Every judge of a run: the panel's members, or the one judge, named ''. */
export function runJudges(config: Pick<StoredRunConfig, 'judge' | 'judges'>): RunJudge[] {
  return config.judges ?? [{ ...config.judge!, name: '' }];
}

/**
 * One verdict per query × copilot of a run, as every report, compare, study and prune reads them: each judge's mean over
 * its successful samples, then the panel's aggregate (see core/stats/consensus.ts).
 */
export async function consensusVerdicts(store: ResultsStore, run: RunRecord): Promise<StoredJudgment[]> {
  return consensusJudgments(
    await store.judgments(run.runId, run.rubricVersion),
    panelAggregate(withStoredConfig(run).config),
    panelMinJudges(withStoredConfig(run).config),
  );
}

/** How many judges of the run must give a verdict on a unit for it to have one (see minJudgesOf). */
export function panelMinJudges(config: Pick<StoredRunConfig, 'panel' | 'judges'>): number {
  return config.judges ? minJudgesOf(config.panel, config.judges.length) : 1;
}

/** How a panel's judges are combined into the reported score (a single judge: its own mean). */
export function panelAggregate(config: Pick<StoredRunConfig, 'panel'>): PanelAggregate {
  return config.panel?.aggregate ?? 'mean';
}

/** How many independent samples of every unit each judge is asked for (1 for runs made before samples existed). */
export function runSamples(config: Pick<StoredRunConfig, 'judge' | 'panel'>): number {
  return (config.judge ? config.judge.samples : config.panel?.samples) ?? 1;
}

/** What the run record says about its judging: the single judge, or the panel's models and endpoints together. */
export function runJudgeRecord(
  config: Pick<StoredRunConfig, 'judge' | 'judges'>,
  rubricTemperature: number,
): RunRecord['judge'] {
  const temperatureOf = (j: { temperature?: number | null }) =>
    j.temperature === undefined ? rubricTemperature : j.temperature;
  if (config.judge)
    return { model: config.judge.model, baseURL: config.judge.baseURL, temperature: temperatureOf(config.judge) };
  const judges = config.judges!;
  return {
    model: `panel: ${judges.map((j) => `${j.name} (${j.model})`).join(', ')}`,
    baseURL: [...new Set(judges.map((j) => j.baseURL))].join(' '),
    temperature: temperatureOf(judges[0]),
  };
}

/**
 * How the judge of `slot` is asked. Sample 0 keeps the seed and cache key a run without samples had (so re-judging an
 * older run reuses its answers); later samples get their own seed and cache key, so they are independent asks.
 */
export function judgeEndpoint(
  run: RunRecord & { config: StoredRunConfig },
  slot: JudgeSlot = FIRST_SLOT,
  rubricTemperature: number | null = run.judge.temperature,
): ModelEndpoint {
  const j = runJudges(run.config).find((x) => x.name === slot.judge);
  if (!j) throw new Error(`run ${run.runId} has no judge named "${slot.judge}"`);
  const variant = [slot.judge ? `judge:${slot.judge}` : '', slot.sample ? `sample:${slot.sample}` : '']
    .filter(Boolean)
    .join(' ');
  return {
    baseURL: j.baseURL,
    model: j.model,
    apiKeyEnv: j.apiKeyEnv,
    // A panel member's own temperature, else the rubric's; the single judge's was resolved when the run was made.
    temperature: slot.judge ? (j.temperature === undefined ? rubricTemperature : j.temperature) : run.judge.temperature,
    timeoutMs: j.timeoutMs,
    responseFormat: j.responseFormat,
    ...(j.provider ? { provider: j.provider } : {}),
    ...(j.extraBody ? { extraBody: j.extraBody } : {}),
    maxTokens: j.maxTokens,
    maxTokensParam: j.maxTokensParam,
    seed:
      j.sendSeed === false
        ? null
        : seedNumber(slot.sample ? `${run.config.seed}:sample:${slot.sample}` : run.config.seed),
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

/** The grounding rubric a run started with, rebuilt from the store; null when the run has no grounding checks. */
export async function runGroundingRubric(
  deps: ActivityDeps,
  run: RunRecord & { config: StoredRunConfig },
): Promise<GroundingRubric | null> {
  const version = run.config.groundingVersion;
  if (!run.config.grounding || !version) return null;
  const stored = await deps.store.getRubric(version);
  if (!stored)
    throw new Error(
      `grounding rubric ${version} of run ${run.runId} is not in the results store ${deps.store.location}`,
    );
  return groundingRubricFromContent(stored.content as Record<string, unknown>);
}

/**
 * Who checks grounding for a work item of `slot`: the config's grounding judge (null for every panel member but the
 * first, whose item does the check), else that slot's own judge at the grounding rubric's temperature.
 */
export function groundingEndpoint(
  run: RunRecord & { config: StoredRunConfig },
  slot: JudgeSlot,
  rubricTemperature: number,
): { endpoint: ModelEndpoint; judgeName: string } | null {
  const own = run.config.grounding?.judge;
  if (own) {
    if (slot.judge !== runJudges(run.config)[0].name) return null;
    const endpoint: ModelEndpoint = {
      baseURL: own.baseURL,
      model: own.model,
      apiKeyEnv: own.apiKeyEnv,
      temperature: own.temperature === undefined ? rubricTemperature : own.temperature,
      timeoutMs: own.timeoutMs,
      responseFormat: own.responseFormat,
      maxTokens: own.maxTokens,
      maxTokensParam: own.maxTokensParam,
      seed: own.sendSeed === false ? null : seedNumber(run.config.seed),
    };
    return { endpoint, judgeName: '' };
  }
  const configured = runJudges(run.config).find((j) => j.name === slot.judge);
  return {
    endpoint: {
      ...judgeEndpoint(run, slot),
      temperature: configured?.temperature === undefined ? rubricTemperature : configured.temperature,
    },
    judgeName: slot.judge,
  };
}
