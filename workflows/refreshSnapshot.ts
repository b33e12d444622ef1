import {
  CancellationScope,
  executeChild,
  isCancellation,
  proxyActivities,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { SnapshotActivities } from '../activities';
import { benchmarkRun } from './benchmarkRun';
import { rootCause } from '../contract/errors';
import { snapshotCurate } from './snapshotCurate';
import { snapshotGenerate } from './snapshotGenerate';
import type { RefreshInput, RefreshResult } from '../contract/snapshot';
import type { StoredRunConfig } from '../activities/deps';

const { refreshPrepare, refreshRecord, refreshRecordRun } = proxyActivities<SnapshotActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

// Every call of a world asked again: as long as the tools take, heartbeating between calls.
const { refreshWorlds } = proxyActivities<SnapshotActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

const ALERT_ATTEMPTS = 5;
// Delivery retried with back-off (1 s, 2 s, 4 s, 8 s); the last attempt records a failure instead of failing the refresh.
const { refreshAlert } = proxyActivities<SnapshotActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    maximumAttempts: ALERT_ATTEMPTS,
    initialInterval: '1 second',
    backoffCoefficient: 2,
    nonRetryableErrorTypes: ['InputError'],
  },
});

/**
 * A scheduled run's id: the schedule's name, the start date and minute (UTC), and the last six characters of the
 * Temporal run id (its random tail: the server's run ids are UUIDv7, whose first characters are a timestamp).
 */
export function scheduledRunId(schedule: string, startTime: Date, temporalRunId: string): string {
  const stamp = startTime.toISOString().replace(/[-:]/g, '').slice(0, 13).replace('T', '-');
  return `${schedule}-${stamp}-${temporalRunId.replace(/-/g, '').slice(-6)}`;
}

/**
 * What a refresh schedule starts: make a new snapshot (from the newest traffic file, or by generation) whose parent is
 * the schedule's previous snapshot, and optionally benchmark it. Generation and curation run as child workflows, so each
 * keeps its own small history and shows up on its own in the Web UI.
 */
export async function refreshSnapshot(input: RefreshInput<StoredRunConfig>): Promise<RefreshResult> {
  // A schedule names its workflows by the trigger time to the second, so two triggers in one second share a workflow
  // id. The run id tells them apart; the children, the seed and the store's rows are keyed by it so neither refresh
  // resumes the other's work.
  const info = workflowInfo();
  const workflowId = `${info.workflowId}-${info.runId}`;
  const { refresh, schedule } = input;
  const prepared = await refreshPrepare({
    schedule,
    from: refresh.kind === 'curate' ? refresh.options.from : undefined,
    parentId: refresh.kind === 'none' ? null : (refresh.options.parentId ?? null),
  });
  const common = { workflowId: `${workflowId}-snapshot` };
  // Each refresh varies the seed, so a deterministic generator still yields a new set and curation a new sample.
  const made =
    refresh.kind === 'none'
      ? { snapshotId: refresh.options.snapshotId }
      : refresh.kind === 'generate'
        ? await executeChild(snapshotGenerate, {
            ...common,
            args: [
              {
                ...refresh.options,
                seed: `${refresh.options.seed}/${workflowId}`,
                parentId: prepared.parentId,
                schedule,
              },
            ],
          })
        : await executeChild(snapshotCurate, {
            ...common,
            args: [
              {
                ...refresh.options,
                from: prepared.source!,
                seed: `${refresh.options.seed}/${workflowId}`,
                parentId: prepared.parentId,
                schedule,
              },
            ],
          });
  await refreshRecord({ schedule, workflowId, snapshotId: made.snapshotId, parentId: prepared.parentId });
  const result: RefreshResult = {
    schedule,
    snapshotId: made.snapshotId,
    parentId: prepared.parentId,
    unchanged: made.snapshotId === prepared.parentId,
    ...(prepared.source ? { source: prepared.source } : {}),
  };
  upsertMemo({ snapshotId: result.snapshotId, parentId: result.parentId ?? '' });

  if (input.thenRun) await runAfterRefresh(input, input.thenRun.config, workflowId, result);
  return result;
}

/**
 * The scheduled benchmark run on the refreshed snapshot (a child workflow), with the replaying agent copilots' worlds
 * refreshed first when the schedule asks for it; its alert after it, or after its failure.
 */
async function runAfterRefresh(
  input: RefreshInput<StoredRunConfig>,
  thenRun: StoredRunConfig,
  workflowId: string,
  result: RefreshResult,
): Promise<void> {
  const { schedule } = input;
  const info = workflowInfo();
  const runId = scheduledRunId(schedule, info.startTime, info.runId);
  result.runId = runId;
  upsertMemo({ runId });
  let config: StoredRunConfig = { ...thenRun, queries: `snapshot:${result.snapshotId}` };
  if (input.refreshWorlds) {
    const refreshed = await refreshWorlds({ schedule, workflowId, copilots: config.copilots });
    config = { ...config, copilots: refreshed.copilots };
    result.worlds = refreshed.worlds;
    upsertMemo({ worlds: refreshed.worlds.map((w) => `${w.copilot}=${w.to}`).join(' ') });
  }
  await refreshRecordRun({ schedule, workflowId, runId });
  const run = await executeChild(benchmarkRun, {
    workflowId: runId,
    args: [{ runId, snapshotId: result.snapshotId, config }],
  }).catch(async (error: unknown) => {
    // A run that failed or was cancelled is alerted too (a gate cannot vouch for it), then the refresh fails with it.
    const alert = input.alert;
    if (alert)
      await CancellationScope.nonCancellable(() =>
        refreshAlert({ schedule, runId, alert, lastAttempt: ALERT_ATTEMPTS, failure: runFailure(error) }),
      );
    throw error;
  });
  result.reportPath = run.reportPath;
  if (input.alert)
    result.alert = await refreshAlert({ schedule, runId, alert: input.alert, lastAttempt: ALERT_ATTEMPTS });
}

/** A child run's failure in its own words: cancelled, or the innermost cause. */
function runFailure(error: unknown): string {
  return isCancellation(error) ? 'cancelled (judgeflow cancel, or from the Temporal UI)' : rootCause(error);
}
