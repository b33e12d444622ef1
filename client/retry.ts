import crypto from 'node:crypto';
import { InputError } from '../core/model/inputError';
import { failedItems, type ReopenedItems, type RetryFilter } from '../core/model/retryFailed';
import type { ResultsStore, RunRecord } from '../core/model/store';
import type { BenchmarkRunInput } from '../contract/run';
import { withStoredConfig, type StoredRunConfig } from '../activities/deps';

/**
 * The engine's flag for a fresh benchmarkRun execution that continues a run the store holds (asks only what it does not
 * hold). Until the engine's BenchmarkRunInput carries it, it is added here; the snapshot id makes the execution read the
 * run's stored queries, not its query file (which may have changed since).
 */
export type RetryInput = BenchmarkRunInput<StoredRunConfig> & { resumeFromStore: true; snapshotId: string };

export interface RetryPlan {
  run: RunRecord;
  reopened: ReopenedItems;
  /** A workflow id of its own: the run's first execution keeps its id and history. */
  workflowId: string;
  input: RetryInput;
}

/**
 * `judgeflow retry RUN_ID --failed`: reopen the run's recorded failures (the selected ones) in the store and build the
 * execution that asks them again. Nothing is reopened when nothing matches (`reopened` is then empty).
 */
export async function planRetry(store: ResultsStore, runId: string, filter: RetryFilter): Promise<RetryPlan> {
  const run = await store.getRun(runId);
  if (!run) throw new InputError(`run ${runId} is not in the results store ${store.location} (see judgeflow runs)`);
  if (run.status === 'running')
    throw new InputError(
      `run ${runId} is still running; retry its failures once it has finished (judgeflow status ${runId}), or cancel it first`,
    );
  if (filter.copilot !== undefined && !run.copilots.includes(filter.copilot))
    throw new InputError(`run ${runId} has no copilot "${filter.copilot}" (its copilots: ${run.copilots.join(', ')})`);
  // A re-judge run adopted its answers from its source run: only its judgments can be asked again here.
  const responses = run.sourceRunId ? [] : await store.responses(runId);
  const reopened = failedItems(
    responses,
    await store.judgments(runId, run.rubricVersion),
    await store.judgeUnits(runId),
    filter,
  );
  if (reopened.responses.length || reopened.judgments.length) await store.reopenItems(runId, reopened);
  return {
    run,
    reopened,
    workflowId: `${runId}-retry-${crypto.randomBytes(3).toString('hex')}`,
    input: {
      runId,
      config: withStoredConfig(run).config,
      snapshotId: run.snapshotId,
      ...(run.sourceRunId ? { sourceRunId: run.sourceRunId } : {}),
      resumeFromStore: true,
    },
  };
}
