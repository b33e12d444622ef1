/** Small, serialisable values that cross the workflow boundary. Large texts stay in the results store. */

export type Stage = 'load' | 'collect' | 'judge' | 'report' | 'done' | 'failed';

export interface Progress {
  runId: string;
  stage: Stage;
  done: number;
  total: number;
  failures: number;
  reportPath: string | null;
}

export interface CopilotLimits {
  name: string;
  concurrency: number;
  requestsPerMinute?: number;
  timeoutMs: number;
  retry: { maxAttempts: number; initialIntervalMs: number; backoffCoefficient: number; maxIntervalMs: number };
}

export interface JudgeLimits {
  concurrency: number;
  timeoutMs: number;
  maxAttempts: number;
}

/** Workflow input. The config carries names of environment variables, never their values. */
export interface BenchmarkRunInput {
  runId: string;
  /** The validated run config with absolute paths (see client/config.ts). */
  config: {
    protocol: string;
    copilots: CopilotLimits[];
    /** One judge, or a panel (`judges`): exactly one is set. */
    judge?: JudgeLimits;
    judges?: JudgeLimits[];
    chunkSize: number;
  } & Record<string, unknown>;
  /** Re-judge: reuse this run's stored responses instead of collecting. */
  sourceRunId?: string;
  /** Run on this stored snapshot instead of reading `config.queries` (a scheduled refresh with --then-run). */
  snapshotId?: string;
  /** Re-judge: reuse stored judge answers for identical requests (unchanged rubric and judge). */
  reuseJudgments?: boolean;
}

export interface PreparedRun {
  snapshotId: string;
  rubricVersion: string;
  queryIds: string[];
}

export interface CollectChunkInput {
  runId: string;
  copilot: CopilotLimits;
  queryIds: string[];
}

export interface JudgeChunkInput {
  runId: string;
  judge: JudgeLimits;
  /** A panel: work item i belongs to judges[i mod judges.length] (planJudging's order) and runs within that judge's limits. */
  judges?: JudgeLimits[];
  from: number;
  to: number;
  /** The largest unit's worst case (planJudging); absent in runs planned before it was computed. */
  unitTimeoutMs?: number;
}

export interface ChunkResult {
  done: number;
  failed: number;
}

export interface RunResult {
  runId: string;
  reportPath: string;
  progress: Progress;
}
