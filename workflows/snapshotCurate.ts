import { proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { stageProgressQuery, type StageProgress } from '../contract/stageProgress';
import type { SnapshotActivities } from '../activities';
import { llmCallOptions } from './llmCalls';
import { runPool } from './pool';
import type { CurateInput, CurateResult, CurationStageCounts } from '../contract/snapshot';

const { curateFilter, planCategorisation, finishCategorisation, curateDistil, curatePrune, curateSample } =
  proxyActivities<SnapshotActivities>({
    startToCloseTimeout: '10 minutes',
    retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
  });

/**
 * Curation from production traffic after CryptoAnalystBench: filter → categorise → distil → prune → curate,
 * each stage an activity whose items stay in the results store and whose counts come back here. Categorisation fans
 * out from here, one activity per batch of queries (a crashed batch is retried alone), like generation's cells.
 */
export async function snapshotCurate(input: CurateInput): Promise<CurateResult> {
  const jobId = workflowInfo().workflowId;
  // One bar for the five stages.
  const progress: StageProgress = { stage: 'curate', done: 0, total: 5, failures: 0 };
  setHandler(stageProgressQuery, () => progress);
  const step = <T>(result: T): T => {
    progress.done++;
    return result;
  };
  const filter = step(
    await curateFilter({
      jobId,
      from: input.from,
      minChars: input.minChars,
      maxChars: input.maxChars,
      skipBad: input.skipBad,
    }),
  );
  const categorise = step(await categoriseStage(jobId, input));
  const distil = step(await curateDistil({ jobId, similarity: input.similarity }));
  const prune = step(
    await curatePrune({ jobId, runId: input.pruneRunId, threshold: input.pruneThreshold, metric: input.pruneMetric }),
  );
  const sample = step(await curateSample({ jobId, input, workflowId: jobId }));
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

async function categoriseStage(jobId: string, input: CurateInput): Promise<CurationStageCounts> {
  const { categories, llm, batchSize } = input;
  const { categoriseBatch } = proxyActivities<SnapshotActivities>(llmCallOptions(llm));
  const { batches } = await planCategorisation({ jobId, categories, batchSize, protocol: input.protocol });
  await runPool(
    Array.from({ length: batches }, (_, batch) => batch),
    llm.concurrency,
    0,
    (batch) => categoriseBatch({ jobId, batch, categories, llm, protocol: input.protocol }),
  );
  return finishCategorisation({ jobId, categories });
}
