import { defineQuery } from '@temporalio/workflow';

/** Progress of a multi-stage job (snapshot generation, curation), answered by the same `progress` query name as runs. */
export interface StageProgress {
  stage: string;
  done: number;
  total: number;
  failures: number;
  /** Stages running at the same time (a run's collect and judge), each with its own figures. */
  stages?: Record<string, { done: number; total: number; failures: number }>;
}

export const stageProgressQuery = defineQuery<StageProgress>('progress');
