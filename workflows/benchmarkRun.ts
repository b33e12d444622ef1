import {
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { BenchmarkActivities } from '../activities';
import { collectAndJudge } from './collectAndJudge';
import { progressQuery } from '../contract/control';
import { rootCause } from '../contract/errors';
import { endPauseWithNothingLeft, handleRunControl, initialControl } from './runControl';
import type { RunControl } from '../contract/run';
import { callsInFlight, waitingEndpoints, type LaneSlot } from './retune';
import type { BenchmarkRunInput, Progress, RunResult } from '../contract/run';
import type { StoredRunConfig } from '../activities/deps';

const { prepareRun, markRunFailed } = proxyActivities<BenchmarkActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

const { writeReport } = proxyActivities<BenchmarkActivities>({
  // A paper-scale report takes seconds, a huge one minutes; it heartbeats while it renders, so a killed worker's report
  // is handed to another within 30 s instead of waiting out the whole bound.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

/**
 * One benchmark run, in three stages: prepare (store the snapshot, rubric and run record, or adopt a re-judge's source
 * answers) → collect and judge at once (workflows/collectAndJudge.ts) → write the report. When its history grows long
 * it continues as new, carrying where it stands. Large texts never enter this history: activities keep them in the
 * results store.
 */
export async function benchmarkRun(input: BenchmarkRunInput<StoredRunConfig>): Promise<RunResult> {
  const { runId } = input;
  const progress: Progress = input.carried?.progress ?? {
    runId,
    stage: 'load',
    done: 0,
    total: 0,
    failures: 0,
    reportPath: null,
  };
  const control = input.carried?.control ?? initialControl(input.config.budget);
  let collectingAndJudging = true;
  const slot: LaneSlot = {}; // collectAndJudge lends its lanes here, for the controls and the progress query
  setHandler(progressQuery, () => ({
    ...progress,
    paused: control.paused,
    ...(control.paused ? { callsInFlight: callsInFlight(slot) } : {}),
    ...waitingOf(slot),
    ...(control.warnings.length ? { warnings: control.warnings } : {}),
    ...(control.spent ? { spent: control.spent } : {}),
  }));
  handleRunControl(control, slot, () => collectingAndJudging);
  try {
    const prepared = input.carried?.prepared ?? (await prepareRun(input));
    const state = await collectAndJudge({ input, prepared, progress, state: input.carried?.state, control, slot });
    if (state)
      return await continueAsNew<typeof benchmarkRun>({ ...input, carried: { prepared, state, progress, control } });
    collectingAndJudging = false;
    endPauseWithNothingLeft(control);
    return await report(runId, progress, control);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error; // the run goes on in its next history
    progress.stage = 'failed';
    // Even when the run was cancelled, the store must learn it ended.
    const reason = isCancellation(error) ? 'cancelled (judgeflow cancel, or from the Temporal UI)' : rootCause(error);
    await CancellationScope.nonCancellable(() => markRunFailed({ runId, reason }));
    throw error;
  }
}

function waitingOf(slot: LaneSlot): { waiting?: string[] } {
  const waiting = waitingEndpoints(slot);
  return waiting.length ? { waiting } : {};
}

/**
 * Aggregate and write report.json, results.csv, report.md. Not cancellable: once the files are being written the run
 * completes, so the stored status always matches the files on disk (a cancel arriving now comes too late).
 */
async function report(runId: string, progress: Progress, control: RunControl): Promise<RunResult> {
  progress.stage = 'report';
  // What was done to the run (pauses, budget warnings) goes into its report; nothing of it is a large text.
  const recorded =
    control.history.length || control.warnings.length || control.budget
      ? {
          control: {
            history: control.history,
            warnings: control.warnings,
            ...(control.budget ? { budget: control.budget } : {}),
            ...(control.spent ? { spent: control.spent } : {}),
          },
        }
      : {};
  const { reportPath } = await CancellationScope.nonCancellable(() => writeReport({ runId, ...recorded }));
  Object.assign(progress, { stage: 'done', reportPath });
  return { runId, reportPath, progress };
}
