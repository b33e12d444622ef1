import { defineQuery } from '@temporalio/workflow';

/** Progress of a multi-stage job (snapshot generation, curation). A run answers `progress` (contract/control.ts) with its own shape. */
export interface StageProgress {
  stage: string;
  done: number;
  total: number;
  failures: number;
  /** Stages running at the same time (a run's collect and judge), each with its own figures. */
  stages?: Record<string, { done: number; total: number; failures: number }>;
}

export const stageProgressQuery = defineQuery<StageProgress>('stageProgress');
