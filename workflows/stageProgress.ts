import { defineQuery } from '@temporalio/workflow';

/** Progress of a multi-stage job (snapshot generation, curation), answered by the same `progress` query name as runs. */
export interface StageProgress {
  stage: string;
  done: number;
  total: number;
  failures: number;
}

export const stageProgressQuery = defineQuery<StageProgress>('progress');
