import path from 'node:path';
import { parseRunConfig, type RunConfig } from './config';
import type { ResultsStore, RunRecord } from '../core/model/store';
import { InputError } from '../core/model/inputError';
import { reloadableConfig } from '../core/model/runConfig';
import { withStoredConfig } from '../activities/deps';
import { loadConfiguredRubric, protocolFor } from '../rubrics';
import { storedRubric } from '../rubrics/storedRubric';

export interface RejudgeOptions {
  sourceRunId: string;
  /** A rubric directory; default: the one the source run's config named (or the protocol default). */
  rubricDir?: string;
  judgeModel?: string;
  judgeUrl?: string;
  judgeKeyEnv?: string;
  /**
   * Independent samples per unit. Samples the source already has are identical requests (same seed, same presentation
   * rotation), so with answer reuse only the new ones are asked: `--samples 3` on a run judged once asks for samples 2 and 3.
   */
  samples?: number;
  /** Ask the judge again even where an identical request was answered before. */
  force?: boolean;
  /** Reuse answers to identical judge requests even though the rubric version changed (e.g. only weights changed). */
  reuseAnswers?: boolean;
  /**
   * Re-run only the grounding checks (`rejudge RUN --grounding`): the protocol's verdicts come from the answer cache
   * (identical requests, no judge call), every grounding check is asked afresh — with the stored grounding config, or
   * defaults when the source run had none.
   */
  grounding?: boolean;
  /** With `grounding`: a grounding rubric directory other than the source run's (or the shipped one). */
  groundingRubricDir?: string;
}

export interface RejudgePlan {
  config: RunConfig;
  source: RunRecord;
  rubricVersion: string;
  rubricChanged: boolean;
  /**
   * What the rubric change touches: 'none'; 'aggregate-only' (weights, names: the judge requests are identical, so the
   * stored verdicts are re-scored with no judge call); 'judge-facing' (prompts, dimensions, scales: judged afresh).
   */
  rubricChange: 'none' | 'aggregate-only' | 'judge-facing';
  judgeChanged: boolean;
  /** Passed to the workflow: answers to identical judge requests come from the results store's answer cache instead of the judge. */
  reuseJudgments: boolean;
}

/**
 * The config of a re-judge: the source run's stored config with the rubric and judge overridden.
 * Validated here, before anything starts, so a bad override fails as an input error with nothing written.
 */
export async function planRejudge(store: ResultsStore, opts: RejudgeOptions): Promise<RejudgePlan> {
  const source = await store.getRun(opts.sourceRunId);
  if (!source)
    throw new InputError(
      `run ${opts.sourceRunId} is not in the results store ${store.location} (see judgeflow runs; is JUDGEFLOW_HOME the one the run used?)`,
    );
  if (source.status === 'running')
    throw new InputError(
      `run ${source.runId} is still running; re-judge it once it has finished (judgeflow status ${source.runId})`,
    );
  const collected = (await store.responses(source.runId)).filter((r) => r.status === 'ok').length;
  if (collected === 0) throw new InputError(`run ${source.runId} has no collected responses to re-judge`);

  if (
    opts.grounding &&
    (opts.rubricDir ||
      opts.judgeModel ||
      opts.judgeUrl ||
      opts.judgeKeyEnv ||
      opts.samples ||
      opts.force ||
      opts.reuseAnswers)
  )
    throw new InputError(
      '--grounding re-runs only the grounding checks, keeping every other verdict; it takes no --rubric, --judge-*, --samples, --force or --reuse-answers (use --grounding-rubric DIR for another grounding rubric)',
    );
  if (opts.groundingRubricDir && !opts.grounding) throw new InputError('--grounding-rubric applies to --grounding');
  // What the source's record added (its groundingVersion: the re-judge stores its own) and keys since removed are dropped.
  const stored: Record<string, unknown> & {
    judge?: Record<string, unknown>;
    panel?: Record<string, unknown>;
    grounding?: Record<string, unknown>;
  } = reloadableConfig(withStoredConfig(source).config);
  if (opts.grounding)
    stored.grounding = {
      ...(stored.grounding ?? {}),
      reuseAnswers: false,
      ...(opts.groundingRubricDir ? { rubric: path.resolve(opts.groundingRubricDir) } : {}),
    };
  else if (stored.grounding) stored.grounding = { ...stored.grounding, reuseAnswers: true };
  const judging: Record<string, unknown> = {};
  if (stored.judge) {
    const judge = { ...stored.judge };
    if (opts.judgeModel) judge.model = opts.judgeModel;
    if (opts.judgeUrl) judge.baseURL = opts.judgeUrl;
    if (opts.judgeKeyEnv) judge.apiKeyEnv = opts.judgeKeyEnv;
    if (opts.samples) judge.samples = opts.samples;
    judging.judge = judge;
  } else {
    if (opts.judgeModel || opts.judgeUrl || opts.judgeKeyEnv)
      throw new InputError(
        `run ${source.runId} was judged by a panel (judges:); --judge-model, --judge-url and --judge-key-env change a single judge. Re-judge it with the panel as it is, or start a new run with an edited judges: list`,
      );
    if (opts.samples) judging.panel = { ...stored.panel, samples: opts.samples };
  }
  const overridden = {
    ...stored,
    ...judging,
    ...(opts.rubricDir ? { rubric: path.resolve(opts.rubricDir) } : {}),
  };
  const parsed = parseRunConfig(
    overridden,
    `re-judge of run ${source.runId} (its stored config with your overrides)`,
    process.cwd(),
  );
  const protocol = protocolFor(parsed.protocol);
  // The responses were judged as of the source run (e.g. CryptoAnalystBench's "today" is the day it ran); pinned, the
  // judge requests stay identical, so an unchanged re-judge is free.
  const options = parsed[protocol.id] as Record<string, unknown>;
  const config = {
    ...parsed,
    [protocol.id]: protocol.rejudgeOptions ? protocol.rejudgeOptions(options, source) : options,
  };

  const rubric = loadConfiguredRubric(protocol, config.rubric);
  const rubricChanged = rubric.version !== source.rubricVersion;
  const judgeChanged = config.judge
    ? config.judge.model !== source.judge.model ||
      config.judge.baseURL !== source.judge.baseURL ||
      (config.judge.temperature === undefined ? rubric.judge.temperature : config.judge.temperature) !==
        source.judge.temperature
    : false; // a panel is re-judged as it was (its members cannot be overridden)
  // The cache key is the full judge request, so reuse never mixes answers to different questions. Unchanged rubric:
  // reuse by default (free). Changed rubric: judge every stored response afresh, so the new result set comes from one
  // judging session even on a judge that is not perfectly deterministic; --reuse-answers opts into the saving.
  const sourceRubric = await storedRubric(store, source.rubricVersion);
  const rubricChange = !rubricChanged
    ? 'none'
    : sourceRubric && sourceRubric.judgeVersion === rubric.judgeVersion
      ? 'aggregate-only'
      : 'judge-facing';
  // An aggregate-only change asks exactly the requests the source asked: reuse is automatic (the saving is the point).
  const reuseJudgments = opts.grounding
    ? true
    : !opts.force && (rubricChange !== 'judge-facing' || Boolean(opts.reuseAnswers));
  return { config, source, rubricVersion: rubric.version, rubricChanged, rubricChange, judgeChanged, reuseJudgments };
}
