/** Inputs and results of the snapshot workflows (generation, curation, scheduled refresh). Small and serialisable. */
import type { ModelEndpoint } from '../core/llm/client';
import type { WorkflowRunConfig } from './run';

/** The query generator's or tagger's endpoint, with the limits the workflow enforces on it. */
export interface LlmSettings extends ModelEndpoint {
  /** Requests in flight at once (cells for generation, batches for tagging). */
  concurrency: number;
  /** Transport attempts per request (Temporal activity retries). */
  maxAttempts: number;
  responseFormat: 'json_schema' | 'json_object';
}

export interface GenerateInput {
  /** A protocol with a query generator (LATTICE). */
  protocol: string;
  perCell: number;
  /** Subsets of T1..T16 and C1..C5; all when absent. */
  tasks?: string[];
  categories?: string[];
  seed: string;
  llm: LlmSettings;
  parentId?: string | null;
  /** Keep the parent snapshot's queries and add to them up to `perCell` per cell (the paper's 80 → 240 → 1,200). */
  extend?: boolean;
  /** Regeneration rounds to refill cells that lost queries to near-duplicate removal. */
  maxRounds: number;
  /** Ask for this fraction more than a cell still needs (duplicates are expected). */
  overAsk: number;
  /** Texts at least this similar (0..1, core/snapshots/text.ts similarity) are near-duplicates. */
  similarity: number;
  /** Set by a scheduled refresh. */
  schedule?: string;
}

export interface GenerateResult {
  jobId: string;
  snapshotId: string;
  parentId: string | null;
  queries: number;
  cells: number;
  rounds: number;
  /** Candidates the generator produced, and how many of them near-duplicate removal dropped. */
  candidates: number;
  duplicatesRemoved: number;
  /** Cells still short of perCell after the last round (empty when every cell is full). */
  shortCells: string[];
  promptsVersion: string;
}

export interface CurateInput {
  /** A protocol that curates from traffic; CryptoAnalystBench when absent. */
  protocol?: string;
  /** Absolute path of the traffic file (JSON Lines or CSV). */
  from: string;
  target: number;
  minChars: number;
  maxChars: number;
  categories: string[];
  pruneRunId?: string;
  pruneThreshold: number;
  pruneMetric: 'mean' | 'total';
  seed: string;
  skipBad: boolean;
  llm: LlmSettings;
  /** Queries per tagging request. */
  batchSize: number;
  /** Distil: texts at least this similar (or with the same template) collapse into one. */
  similarity: number;
  parentId?: string | null;
  schedule?: string;
}

/** One curation stage's counts: how many went in and came out, plus stage-specific figures. */
export interface CurationStageCounts {
  stage: 'filter' | 'categorise' | 'distil' | 'prune' | 'curate';
  in: number;
  out: number;
  [detail: string]: number | string | boolean | Record<string, number>;
}

export interface CurateResult {
  jobId: string;
  snapshotId: string;
  parentId: string | null;
  queries: number;
  stages: CurationStageCounts[];
  /** Category counts of the categorised traffic (the proportions to match) and the sample's allocation. */
  proportions: Record<string, number>;
  allocation: Record<string, number>;
}

/** No new snapshot: every firing benchmarks the same one (a fixed query set on a cadence). */
export interface FixedQueriesInput {
  snapshotId: string;
  /** Stated with --collect-again: each firing collects the copilots' answers anew (for judgeflow stability). */
  collectAgain: boolean;
}

export type RefreshSpec =
  | { kind: 'generate'; options: GenerateInput }
  | { kind: 'curate'; options: CurateInput }
  | { kind: 'none'; options: FixedQueriesInput };

/** Where and when a schedule's runs are reported: POSTed JSON, by an activity, once per run. */
export interface AlertSettings {
  /** The URL itself (not a secret), or */
  url?: string;
  /** the name of the worker's environment variable that holds it (a webhook URL carrying a token). */
  urlEnv?: string;
  /** regression: only when a copilot regressed against the previous scheduled run; any: after every run that has one. */
  on: 'regression' | 'any';
}

export interface RefreshInput<Config extends WorkflowRunConfig = WorkflowRunConfig> {
  /** The schedule's name (its Temporal schedule id); snapshots of one schedule form a parent → child chain. */
  schedule: string;
  /** For curate, options.from is a file, a directory or a glob: the newest matching file is used. */
  refresh: RefreshSpec;
  /** Start a benchmark run on the new snapshot (as a child workflow) with this validated run config. */
  thenRun?: { config: Config };
  /** After each run, gate it against the schedule's previous run and POST the verdict (needs thenRun). */
  alert?: AlertSettings;
  /**
   * Before each run, ask the tools again every call of the world each replaying agent copilot of thenRun answers from,
   * as a new world snapshot, and replay that one (`--refresh-worlds`; activities/worldRefresh.ts).
   */
  refreshWorlds?: boolean;
}

/** One replaying agent copilot's world, refreshed for a scheduled run. */
export interface WorldRefresh {
  copilot: string;
  /** The world asked again: the schedule's newest for this copilot, else the one its config names. */
  from: string;
  /** The new world snapshot the run replays. */
  to: string;
  /** Tool calls it holds (the tool lists not counted). */
  calls: number;
  /** Calls whose result differs from `from`'s. */
  changed: number;
  /** Calls the tools no longer answered (a fault, a tool gone), which keep their previous result. */
  kept: number;
  /** The recording that holds it (judgeflow world list). */
  recording: string;
}

export interface RefreshResult {
  schedule: string;
  snapshotId: string;
  parentId: string | null;
  /** The refresh produced exactly the previous snapshot's queries. */
  unchanged: boolean;
  source?: string;
  runId?: string;
  reportPath?: string;
  /** What the alert step did (absent without an alert URL). */
  alert?: AlertOutcome;
  /** The worlds refreshed for the run (with --refresh-worlds). */
  worlds?: WorldRefresh[];
}

export interface AlertOutcome {
  status: 'delivered' | 'not-needed' | 'no-baseline' | 'failed' | 'already-delivered';
  baselineRunId: string | null;
  regressions: string[];
  attempts: number;
  error?: string;
  /** The receiver's final HTTP status (after any same-host redirect). */
  httpStatus?: number;
}
