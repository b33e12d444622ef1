import { executeChild, proxyActivities, upsertMemo, workflowInfo } from '@temporalio/workflow';
import type { SnapshotActivities } from '../activities';
import { benchmarkRun } from './benchmarkRun';
import { snapshotCurate } from './snapshotCurate';
import { snapshotGenerate } from './snapshotGenerate';
import type { RefreshInput, RefreshResult } from './snapshotTypes';

const { refreshPrepare, refreshRecord, refreshRecordRun } = proxyActivities<SnapshotActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

/**
 * What a refresh schedule starts: make a new snapshot (from the newest traffic file, or by generation) whose parent is
 * the schedule's previous snapshot, and optionally benchmark it. Generation and curation run as child workflows, so each
 * keeps its own small history and shows up on its own in the Web UI.
 */
export async function refreshSnapshot(input: RefreshInput): Promise<RefreshResult> {
  // A schedule names its workflows by the trigger time to the second, so two triggers in one second share a workflow
  // id. The run id tells them apart; the children, the seed and the store's rows are keyed by it so neither refresh
  // resumes the other's work.
  const info = workflowInfo();
  const workflowId = `${info.workflowId}-${info.runId}`;
  const { refresh, schedule } = input;
  const prepared = await refreshPrepare({ schedule, from: refresh.kind === 'curate' ? refresh.options.from : undefined, parentId: refresh.options.parentId ?? null });
  // Each refresh varies the seed, so a deterministic generator still yields a new set and curation a new sample.
  const seed = `${refresh.options.seed}/${workflowId}`;
  const common = { workflowId: `${workflowId}-snapshot` };
  const made =
    refresh.kind === 'generate'
      ? await executeChild(snapshotGenerate, { ...common, args: [{ ...refresh.options, seed, parentId: prepared.parentId, schedule }] })
      : await executeChild(snapshotCurate, { ...common, args: [{ ...refresh.options, from: prepared.source!, seed, parentId: prepared.parentId, schedule }] });
  await refreshRecord({ schedule, workflowId, snapshotId: made.snapshotId, parentId: prepared.parentId });
  const result: RefreshResult = { schedule, snapshotId: made.snapshotId, parentId: prepared.parentId, unchanged: made.snapshotId === prepared.parentId, ...(prepared.source ? { source: prepared.source } : {}) };
  upsertMemo({ snapshotId: result.snapshotId, parentId: result.parentId ?? '' });

  if (input.thenRun) {
    const runId = `${workflowId}-run`;
    result.runId = runId;
    upsertMemo({ runId });
    await refreshRecordRun({ schedule, workflowId, runId });
    const run = await executeChild(benchmarkRun, {
      workflowId: runId,
      args: [{ runId, snapshotId: made.snapshotId, config: { ...input.thenRun.config, queries: `snapshot:${made.snapshotId}` } }],
    });
    result.reportPath = run.reportPath;
  }
  return result;
}
