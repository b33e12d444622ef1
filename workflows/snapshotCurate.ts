import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { RunActivities } from '../activities';
import type { CurateInput, CurateResult } from './snapshotTypes';

const { curateFilter, curateDistil, curatePrune, curateSample } = proxyActivities<RunActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

/**
 * Curation from production traffic after CryptoAnalystBench: filter → categorise → distil → prune → curate,
 * each stage one activity whose items stay in the results store and whose counts come back here.
 */
export async function snapshotCurate(input: CurateInput): Promise<CurateResult> {
  const jobId = workflowInfo().workflowId;
  const { curateCategorise } = proxyActivities<RunActivities>({
    // Tagging is many LLM requests in one activity; it heartbeats, and a retry resumes at the first unlabelled batch.
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '30 seconds',
    retry: { maximumAttempts: input.llm.maxAttempts, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: ['InputError'] },
  });
  const filter = await curateFilter({ jobId, from: input.from, minChars: input.minChars, maxChars: input.maxChars, skipBad: input.skipBad });
  const categorise = await curateCategorise({ jobId, categories: input.categories, llm: input.llm, batchSize: input.batchSize });
  const distil = await curateDistil({ jobId, similarity: input.similarity });
  const prune = await curatePrune({ jobId, runId: input.pruneRunId, threshold: input.pruneThreshold, metric: input.pruneMetric });
  const sample = await curateSample({ jobId, input, workflowId: jobId });
  return {
    jobId,
    snapshotId: sample.snapshotId,
    parentId: input.parentId ?? null,
    queries: sample.counts.out,
    stages: [filter, categorise, distil, prune, sample.counts],
    proportions: sample.proportions,
    allocation: sample.allocation,
  };
}
