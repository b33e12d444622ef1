import type { RateLimitInfo } from '../core/llm/client';
import type { Budget, RunConfigKeys } from '../core/model/runConfig';

export type { Budget, FailFastSetting } from '../core/model/runConfig';

/** Small, serialisable values that cross the workflow boundary. Large texts stay in the results store. */

export type Stage = 'load' | 'collect' | 'judge' | 'report' | 'done' | 'failed';

/** One stage's figures. */
export interface StageCounts {
  done: number;
  total: number;
  failures: number;
}

/**
 * `stage`, `done`, `total` and `failures` are the headline (the stage still running, failures over all stages). A run
 * that judges while it collects also gives both stages' figures in `stages`; judge `total` grows as units become ready.
 */
export interface Progress {
  runId: string;
  stage: Stage;
  done: number;
  total: number;
  failures: number;
  reportPath: string | null;
  stages?: { collect: StageCounts; judge: StageCounts };
  /** Set while the run is paused (judgeflow pause, a budget, a failing endpoint): why, by whom, since when. */
  paused?: PauseState | null;
  /** Endpoints holding every start for a Retry-After: "copilot X: waiting 60 s (Retry-After) after HTTP 503, 42 s left". */
  waiting?: string[];
  /** While paused: the calls still in flight, which finish and are kept (0: the run is idle until resumed). */
  callsInFlight?: number;
  /** Warnings recorded on the way (80% of the budget). */
  warnings?: string[];
  /** A run with a budget: what its calls have cost so far. */
  spent?: Spend;
  /** Judges that judge in batches: each one's round and batches as last polled. */
  batches?: Record<string, { round: number; batches: BatchProgress[]; live: number }>;
}

export interface CopilotLimits {
  name: string;
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  timeoutMs: number;
  retry: { maxAttempts: number; initialIntervalMs: number; backoffCoefficient: number; maxIntervalMs: number };
}

export interface JudgeLimits {
  /** A panel member's name (unset for a single judge). */
  name?: string;
  concurrency: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  timeoutMs: number;
  maxAttempts: number;
  /** Judge through the provider's Batch API (workflows/batchJudging.ts), polling every batchPollSeconds. */
  batch?: boolean;
  batchPollSeconds?: number;
  /** A batch not ended this long after its submit is cancelled and its lines asked live (activities/judgeBatch.ts default). */
  batchDeadlineHours?: number;
}

/** One judge batch as last polled (status shows it). */
export interface BatchProgress {
  key: string;
  batchId: string | null;
  /** Requests in it (the provider's counts say 0 until it has validated them). */
  lines: number;
  state: string;
  ended: boolean;
  counts: { total: number; succeeded: number; failed: number; pending: number };
  error?: string;
}

/** Where a judge's batch judging stands (workflows/batchJudging.ts), carried across continue-as-new. */
export interface BatchLaneState {
  /** Rounds submitted so far. */
  round: number;
  /** Items taken from the planner for the next round. */
  ready: number[];
  /** Items whose next request is a line of the batches in `waiting`. */
  deferred: number[];
  /** Keys of this round's batches, until their results are stored. */
  waiting: string[];
  /** Items to ask live (a line failed or expired), not yet started by the judge's live lane. */
  live: number[];
  batches: BatchProgress[];
}

/**
 * A run config as the workflow reads it: the keys it reads of the one run config type (core/model/runConfig.ts, with
 * the adapters and protocols in services/runConfig.ts), its copilots known by their limits (adapters sit above
 * contract/); the rest rides along unread.
 */
export type WorkflowRunConfig = Pick<
  RunConfigKeys<CopilotLimits>,
  'protocol' | 'copilots' | 'judge' | 'judges' | 'budget' | 'failFast'
> &
  Record<string, unknown>;

/**
 * Workflow input. The config carries names of environment variables, never their values. `Config` is the run config
 * as the reader knows it: the workflows and activities name the full one (services/runConfig.ts RunConfig).
 */
export interface BenchmarkRunInput<Config extends WorkflowRunConfig = WorkflowRunConfig> {
  runId: string;
  /** The validated run config with absolute paths (see client/config.ts). */
  config: Config;
  /** Re-judge: reuse this run's stored responses instead of collecting. */
  sourceRunId?: string;
  /** Run on this stored snapshot instead of reading `config.queries` (a scheduled refresh with --then-run). */
  snapshotId?: string;
  /** Re-judge: reuse stored judge answers for identical requests (unchanged rubric and judge). */
  reuseJudgments?: boolean;
  /**
   * A new execution for a run the results store already holds (its earlier workflow ended mid-run, e.g. on an older
   * build): adopt the stored run record and ask only what the store does not hold yet (see StoredProgress).
   */
  resumeFromStore?: boolean;
  /** The run's identity (client/runIdentity.ts): the same `judgeflow run` command finds the run again by it. */
  runKey?: string;
  /** Set when the run continued as new (its history had grown long): where it stands. */
  carried?: { prepared: PreparedRun; state: RunState; progress: Progress; control?: RunControl };
}

/** How a run gets its answers (planRun), and how long one judge unit may take. */
export interface RunPlan {
  /** The largest possible unit's worst case (every copilot answered). */
  unitTimeoutMs: number;
  /** Copilots asked query by query, in the workflow's lanes. */
  live: string[];
  /** Copilots whose answers are held already, grouped by source (one CSV file): one import step per group. */
  imports: string[][];
  /** Every answer is in the store already (a re-judge adopted its source run's answers). */
  answered: boolean;
  /** Resumed from the store: what it holds already. */
  stored?: StoredProgress;
}

/** What the results store holds of a run resumed from it (planRun with resumeFromStore). */
export interface StoredProgress {
  /** Per live copilot, the queries it has answered or failed for good (not asked again). */
  answered: Record<string, string[]>;
  /** Of those, the answers that failed. */
  answersFailed: number;
  /** Judge work items planned so far, and those of them not judged yet (judged again; finished turns are reused). */
  planned: number;
  unjudged: number[];
  /** Planned work items judged with a failure. */
  judgedFailed: number;
}

/**
 * The judge work items of a run: item i belongs to judges[i mod n] of a panel (planReadyJudgeWork appends whole units ×
 * samples × judges). Per judge, the next of its items to start, and the items it must judge before those (a run
 * resumed from the store: planned items found unjudged).
 */
export interface JudgeWorkState {
  planned: number;
  next: number[];
  redo: number[][];
}

/** Everything a run carries into its next history (continue-as-new); nothing is in flight then. */
export interface RunState {
  plan: RunPlan;
  /** Per live copilot, the position of the next query to ask, in `toAsk[copilot]` when set (resumed), else in the snapshot. */
  nextQuery: Record<string, number>;
  toAsk?: Record<string, string[]>;
  /** Imported and adopted answers are stored and their units planned. */
  answersImported: boolean;
  judgeWork: JudgeWorkState;
  collect: StageCounts;
  judge: StageCounts;
  /** Adaptive limits per endpoint (judge and each copilot). */
  limits: Record<string, LimiterState>;
  /** Per judge endpoint judged in batches (`judge`, `judge:LANE`). */
  batch?: Record<string, BatchLaneState>;
}

/**
 * When a paced call may be sent (epoch ms): the limiter may start its activity up to a second ahead. The run's sends to
 * one endpoint are also kept `spacingMs` apart across all its workers (a slot claimed from the results store,
 * activities/heartbeat.ts), so calls picked up late, by one worker or several, do not leave in a burst.
 */
export interface SendSlot {
  at: number;
  spacingMs?: number;
  /** The run's limiter key (`copilot:NAME`, `judge`, `judge:LANE`). */
  endpoint: string;
}

/** An endpoint's adaptive state (see workflows/limits/limiter.ts). */
export interface LimiterState {
  window: number;
  /** Earliest time (ms) the next call may start (rate caps, Retry-After, rate-limit headers). */
  notBefore: number;
  /** [time, tokens] of the calls of the last minute (tokensPerMinute). */
  recentTokens: Array<[number, number]>;
  /** Start rate control: the start rate measured at the last throttle (null before one), when, and the recent starts. */
  rateBase?: number | null;
  throttledAt?: number;
  recentStarts?: number[];
  /** Start times of recently throttled calls, and [when, requests per second] from headers that said none remained. */
  refusedStarts?: number[];
  headerRates?: Array<[number, number]>;
  headerLimit?: number | null;
  rateTokens?: number;
  rateTokensAt?: number;
  /** Requests the endpoint's rate-limit headers said remain (null when unknown), until headerResetAt. */
  headerBudget?: number | null;
  headerResetAt?: number;
  /** The share of the headers' rate starts are paced at (smaller after each throttle while so paced). */
  headerMargin?: number;
  headerMarginAt?: number;
}

export interface PreparedRun {
  snapshotId: string;
  rubricVersion: string;
  /**
   * How many queries the snapshot holds: the workflow reads their ids from the store a page at a time
   * (workflows/queryPages.ts), so neither this nor a continue-as-new input grows with the snapshot.
   */
  queryCount?: number;
  /** Every query id, as runs prepared by older builds carry it (their histories and carried inputs still hold it). */
  queryIds?: string[];
}

export interface RunResult {
  runId: string;
  reportPath: string;
  progress: Progress;
}

/** What one call told about its endpoint's limits (reported by activities in their results). */
/** Why an item failed for good, as its activity classed it (an adapter error kind) and in the endpoint's own words. */
export interface ItemFailure {
  kind: string;
  message: string;
  /** Another attempt later could succeed (a 5xx, a timeout, the network): such failures never trip the breaker. */
  transient?: boolean;
}

export interface CallOutcome {
  /** HTTP 429/503 or a Retry-After: the endpoint wants fewer calls. */
  throttled?: boolean;
  /** How long the endpoint asked to wait before the next call (capped: a copilot's retry.maxRetryAfterSeconds). */
  retryAfterMs?: number;
  /** What the wait answers ("HTTP 503"), for status. */
  cause?: string;
  /** Tokens the call used (the response's usage), for tokensPerMinute. */
  tokens?: number;
  /** The endpoint's rate-limit headers (x-ratelimit-remaining-*, x-ratelimit-reset-*), when it sent them. */
  rateLimit?: RateLimitInfo;
  /**
   * A call with a send time (SendSlot): how long after it the call actually left (a busy worker's late timer, a slot the
   * run's other sends moved on); the limiter counts the call at its actual time (workflows/limits/limiter.ts).
   */
  sentLateMs?: number;
}

// A run's controls (pause, resume, budget, tune): carried in its state and answered by its updates (contract/control.ts).

/** Why a run is paused, and since when; null while it runs. A budget pause says what was spent of what. */
export interface PauseState {
  /** `budget` for a budget pause; otherwise the words of whoever paused it. */
  reason: string;
  /** Who paused it: a person (`judgeflow pause`), or the run itself (a budget, a failing endpoint). */
  by: 'user' | 'budget' | 'breaker';
  at: string;
  spentUsd?: number | null;
  budgetUsd?: number;
  spentTokens?: number;
  budgetTokens?: number;
  /** A budget pause before a batch round: the estimated price of the smallest part of it that did not fit. */
  nextBatchUsd?: number;
  nextBatchTokens?: number;
}

/** What the run's calls have cost so far (activities/spend.ts). */
export interface Spend {
  usd: number | null;
  tokens: number;
  callsWithoutUsage: number;
  /** Of those, the calls whose tokens are estimated from their request and reply size (≈ 4 characters a token). */
  callsEstimated?: number;
}

/** One step of a run's control history: a pause, a resume, new limits (`tune`) or endpoint settings replaced (`config`). */
export interface ControlStep {
  action: 'pause' | 'resume' | 'tune' | 'config';
  reason: string;
  by: PauseState['by'];
  at: string;
  /** `tune`: every limit changed. */
  limits?: LimitChange[];
  /** `config` (resume --config): the settings replaced ("copilot MyAPI answerPath"). */
  settings?: string[];
  /** `resume --budget-usd/--budget-tokens` (or a config whose budget changed): the caps from then on. */
  budget?: Budget;
}

/** A run's controls, carried across continue-as-new: whether it is paused, its budget, its tuned limits, and what was done to it. */
export interface RunControl {
  paused: PauseState | null;
  budget?: Budget;
  spent?: Spend;
  /** Warnings recorded on the way (80% of the budget), shown by status and in the report. */
  warnings: string[];
  /** Every pause, resume, tune and config replacement, in order (recorded in the run's report). */
  history: ControlStep[];
  /** Limits set by `judgeflow tune`, per limiter key (`copilot:NAME`, `judge`, `judge:LANE`), over the config's. */
  limits?: Record<string, Partial<Record<LimitName, number>>>;
}

/** A resume may raise the budget a budget pause stopped at, and (`--config`) replace the endpoints' settings. */
export interface ResumeRequest {
  reason?: string;
  budgetUsd?: number;
  budgetTokens?: number;
  /** The run's config, loaded and validated as `judgeflow run` loads it (env var names only, never their values). */
  config?: WorkflowRunConfig;
}

/** A limit `judgeflow tune` changes. */
export type LimitName = 'concurrency' | 'requestsPerMinute' | 'tokensPerMinute';

/** One limit of one endpoint changed: what, from (null: unset) → to. */
export interface LimitChange {
  /** `copilot NAME`, `judge NAME` (a panel member) or `the judge`. */
  endpoint: string;
  limit: LimitName;
  from: number | null;
  to: number;
}

/** New limits for one endpoint: a copilot by name, or the judge (a panel's member by name). */
export interface TuneTarget {
  copilot?: string;
  judge?: string;
  concurrency?: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

export interface TuneRequest {
  reason?: string;
  endpoints: TuneTarget[];
}
